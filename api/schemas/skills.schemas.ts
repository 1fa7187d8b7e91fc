import Joi from 'joi';
import { SKILL_LIMITS, SKILL_NAME } from '../services/skill-files.js';
import { optionalProjectQuery, pagination, timestamp, uuid } from './common.schemas.js';

const skillName = Joi.string().pattern(SKILL_NAME, 'skill name').messages({
  'string.pattern.name':
    '{{#label}} must be 1-64 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit',
});

const skillParams = Joi.object({ id: uuid.required(), name: skillName.required() });

/** A file's content in JSON: a UTF-8 string, or an object saying how it is encoded. */
const fileValue = Joi.alternatives(
  Joi.string().allow(''),
  Joi.object({
    content: Joi.string().allow('').required(),
    encoding: Joi.string().valid('utf-8', 'base64').default('utf-8'),
    executable: Joi.boolean().default(false),
  }),
);

export type SkillFileValue = string | { content: string; encoding: 'utf-8' | 'base64'; executable: boolean };

export const skillPut = {
  params: skillParams,
  query: Joi.object(optionalProjectQuery),
  body: Joi.object({
    files: Joi.object()
      .pattern(Joi.string(), fileValue)
      .max(SKILL_LIMITS.files)
      .description(
        'path inside the skill folder → content. Required for JSON uploads; leave the body a zip ' +
          '(Content-Type: application/zip) to upload a zipped folder instead.',
      ),
  }),
};
export interface SkillPutBody {
  files?: Record<string, SkillFileValue>;
}

export const skillList = {
  params: Joi.object({ id: uuid.required() }),
  query: Joi.object({ ...optionalProjectQuery, ...pagination }),
};
export const skillGet = {
  params: skillParams,
  query: Joi.object({
    ...optionalProjectQuery,
    include: Joi.string().valid('files').description("files: also return every file's content"),
  }),
};
export const skillDelete = { params: skillParams, query: Joi.object(optionalProjectQuery) };

const warnings = Joi.array()
  .items(Joi.string())
  .description('why the agent cannot read its skills at run time (sandbox disabled for it or on the server)');

export const skillSummaryResponse = Joi.object({
  name: Joi.string(),
  description: Joi.string(),
  path: Joi.string().description('where the model reads it: /sandbox/skills/<name>/SKILL.md'),
  file_count: Joi.number().integer(),
  total_bytes: Joi.number().integer(),
  content_hash: Joi.string().description('sha256 of the paths, modes and contents'),
  warnings,
  created_at: timestamp,
  updated_at: timestamp,
});
export const skillListResponse = Joi.array().items(skillSummaryResponse);

export const skillDetailResponse = skillSummaryResponse.keys({
  skill_md: Joi.string().description('the content of SKILL.md'),
  files: Joi.array().items(
    Joi.object({
      path: Joi.string(),
      size: Joi.number().integer(),
      executable: Joi.boolean(),
      encoding: Joi.string().valid('utf-8', 'base64').description('with ?include=files'),
      content: Joi.string().description('with ?include=files: text, or base64 for binary files'),
    }),
  ),
});
export const skillPutResponse = skillDetailResponse.keys({
  created: Joi.boolean().description('true when the skill did not exist before'),
});
