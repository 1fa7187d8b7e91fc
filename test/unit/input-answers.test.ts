/**
 * A person's answer to an MCP server's question is checked against the
 * schema the server sent: defaults fill what is left out, a misfit is a 400
 * naming `content.<field>`, and a schema we cannot compile lets the answer
 * through as given.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../core/errors.js';
import { checkedAnswer } from '../../api/services/input-answers.js';

const SEAT = {
  type: 'object',
  properties: {
    seat: { type: 'string' },
    meal: { type: 'string', enum: ['vegetarian', 'standard'], default: 'vegetarian' },
    bags: { type: 'integer', minimum: 0, default: 1 },
    window: { type: 'boolean' },
  },
  required: ['seat'],
};

/** The fields a ValidationError names (fails the test when something else was thrown). */
function fieldsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    const e = err as ValidationError;
    expect(e.status).toBe(400);
    return e.fields.map((f) => f.field);
  }
  throw new Error('expected a ValidationError');
}

describe('checkedAnswer', () => {
  it("fills what is left out with the schema's defaults", () => {
    expect(checkedAnswer(SEAT, { seat: '12A' })).toEqual({ seat: '12A', meal: 'vegetarian', bags: 1 });
  });

  it('keeps what the person gave over the defaults, and does not change the content it was given', () => {
    const content = { seat: '3C', meal: 'standard' };
    expect(checkedAnswer(SEAT, content)).toEqual({ seat: '3C', meal: 'standard', bags: 1 });
    expect(content).toEqual({ seat: '3C', meal: 'standard' });
  });

  it('names each field that does not fit: a missing required one, a wrong value, a wrong type', () => {
    const fields = fieldsOf(() => checkedAnswer(SEAT, { meal: 'fish', bags: -1, window: 'yes' }));
    expect(fields.sort()).toEqual(['content.bags', 'content.meal', 'content.seat', 'content.window']);
  });

  it('says what is wrong with each field, with the keyword that failed', () => {
    try {
      checkedAnswer(SEAT, {});
      expect.unreachable();
    } catch (err) {
      expect((err as ValidationError).fields).toEqual([
        {
          field: 'content.seat',
          message: expect.stringContaining('content.seat') as string,
          type: 'schema.required',
        },
      ]);
    }
  });

  it('names nested fields by their path', () => {
    const schema = {
      type: 'object',
      properties: { address: { type: 'object', properties: { zip: { type: 'string' } }, required: ['zip'] } },
    };
    expect(fieldsOf(() => checkedAnswer(schema, { address: {} }))).toEqual(['content.address.zip']);
    expect(fieldsOf(() => checkedAnswer(schema, { address: { zip: 75001 } }))).toEqual([
      'content.address.zip',
    ]);
  });

  it('lets the answer through as given when there is no schema, or one that cannot be compiled', () => {
    expect(checkedAnswer(undefined, { anything: 1 })).toEqual({ anything: 1 });
    const broken = { type: 'object', properties: { seat: { type: 'no-such-type' } } };
    expect(checkedAnswer(broken, { seat: 5 })).toEqual({ seat: 5 });
    const badRef = { type: 'object', properties: { seat: { $ref: '#/$defs/missing' } } };
    expect(checkedAnswer(badRef, { seat: 5 })).toEqual({ seat: 5 });
  });
});
