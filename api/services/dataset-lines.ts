/**
 * Dataset rows uploaded as JSON lines (one row per line): every line parsed
 * and checked as a row of a JSON body would be, and any problem named by its
 * line number (1-based, counting blank lines, which are skipped), so nothing
 * is written unless every line is good.
 */
import { ValidationError, type FieldError } from '../../core/errors.js';
import { findUnstorable } from '../http/input-guard.js';
import { datasetRow, MAX_ROWS_PER_UPLOAD, type DatasetRowBody } from '../schemas/datasets.schemas.js';

/** At most this many problems are reported for one upload (the first ones). */
const MAX_PROBLEMS = 20;

/** The problems of one line, named `line <n>` or `line <n>.<field>`. */
function lineProblems(text: string, n: number): { row?: DatasetRowBody; problems: FieldError[] } {
  const at = `line ${n}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problems: [{ field: at, message: `${at} is not valid JSON`, type: 'body.parse' }] };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      problems: [{ field: at, message: `${at} must be a JSON object (one row)`, type: 'object.base' }],
    };
  const unstorable = findUnstorable(value, '');
  const named = (f: FieldError): FieldError => ({
    field: f.field ? `${at}.${f.field}` : at,
    message: `${at}: ${f.message}`,
    type: f.type,
  });
  if (unstorable.length > 0) return { problems: unstorable.map(named) };
  const { error } = datasetRow.validate(value, {
    abortEarly: false,
    allowUnknown: false,
    convert: false,
    errors: { wrap: { label: false } },
  });
  if (!error) return { row: value as DatasetRowBody, problems: [] };
  return {
    problems: error.details.map((d) => named({ field: d.path.join('.'), message: d.message, type: d.type })),
  };
}

/** The rows of a JSON-lines body, or a ValidationError naming each bad line (and the field in it). */
export function rowsFromJsonLines(body: Buffer): DatasetRowBody[] {
  const text = body.toString('utf8').replace(/^\uFEFF/, '');
  const rows: DatasetRowBody[] = [];
  const problems: FieldError[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && problems.length < MAX_PROBLEMS; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const { row, problems: found } = lineProblems(line, i + 1);
    if (row) rows.push(row);
    problems.push(...found);
    if (rows.length > MAX_ROWS_PER_UPLOAD) {
      const message = `at most ${MAX_ROWS_PER_UPLOAD} rows may be added at once (line ${i + 1} is one more)`;
      throw ValidationError.field('rows', message, 'array.max');
    }
  }
  if (problems.length > 0) throw new ValidationError(problems.slice(0, MAX_PROBLEMS));
  if (rows.length === 0) throw ValidationError.field('body', 'the upload holds no rows', 'array.min');
  return rows;
}
