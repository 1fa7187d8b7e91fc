/**
 * What makes a skill folder acceptable, whichever way it was uploaded (zip or
 * JSON): path rules, size caps, SKILL.md and its front matter. Pure functions;
 * problems come back as field errors so one 400 names all of them.
 */
import { createHash } from 'node:crypto';
import { load } from 'js-yaml';
import type { FieldError } from '../../core/errors.js';

export const SKILL_LIMITS = {
  /** The request body of an upload (zip bytes; JSON bodies fall under MAX_BODY_BYTES). */
  archiveBytes: 2 * 1024 * 1024,
  /** All files of one skill, uncompressed. */
  totalBytes: 10 * 1024 * 1024,
  files: 500,
  /** Entries of a zip, folders included, read before anything is inflated. */
  archiveEntries: 1_000,
  pathChars: 256,
  descriptionChars: 1_024,
  frontMatterBytes: 64 * 1024,
  skillsPerAgent: 100,
} as const;

/**
 * A skill name: the folder name under /sandbox/skills and the URL segment. Lower
 * case so that two skills cannot differ only by case on any file system.
 */
export const SKILL_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export const SKILL_MD = 'SKILL.md';

export interface SkillFile {
  /** Relative, '/'-separated, validated by skillPathProblem. */
  path: string;
  content: Buffer;
  executable: boolean;
}

export interface SkillFrontMatter {
  name: string;
  description: string;
}

export interface CheckedSkill extends SkillFrontMatter {
  files: SkillFile[];
  totalBytes: number;
  contentHash: string;
  skillMd: string;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;
/** Bidirectional overrides, embeddings, isolates and marks: they make `txt.exe` read as `exe.txt` (U+202E). */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Why `p` is not an acceptable path inside a skill folder, or undefined when it is. */
export function skillPathProblem(p: string): string | undefined {
  if (p.length === 0) return 'the path is empty';
  if (p.length > SKILL_LIMITS.pathChars)
    return `the path is longer than ${SKILL_LIMITS.pathChars} characters`;
  if (CONTROL.test(p)) return 'the path contains control characters';
  if (BIDI.test(p)) return 'the path contains bidirectional control characters (e.g. U+202E)';
  if (p.includes('\\')) return 'the path contains a backslash (use "/")';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'the path is absolute';
  const segments = p.split('/');
  if (segments.includes('..')) return 'the path escapes the skill folder ("..")';
  if (segments.includes('.')) return 'the path has a "." segment';
  if (segments.includes('')) return 'the path has an empty segment (a "//" or a trailing "/")';
  if (segments.some((s) => Buffer.byteLength(s) > 255)) return 'a path segment is longer than 255 bytes';
  return undefined;
}

const JUNK = (p: string) => p.startsWith('__MACOSX/') || p === '.DS_Store' || p.endsWith('/.DS_Store');

/**
 * Drops archiver litter (macOS `__MACOSX/`, `.DS_Store`) and, when every file
 * sits under one top folder and there is no SKILL.md at the root, strips that
 * folder: zipping a folder and zipping its contents both work.
 */
export function normalizeTree<T extends { path: string }>(files: T[]): T[] {
  const kept = files.filter((f) => !JUNK(f.path));
  if (kept.length === 0 || kept.some((f) => f.path === SKILL_MD)) return kept;
  const top = kept[0]!.path.split('/')[0]!;
  if (!kept.every((f) => f.path.startsWith(`${top}/`))) return kept;
  return kept.map((f) => ({ ...f, path: f.path.slice(top.length + 1) }));
}

const problem = (field: string, message: string, type: string): FieldError => ({ field, message, type });
const fileField = (p: string) => `files.${p}`;

function decodeUtf8(buf: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    return undefined;
  }
}

/** How a file's content is shown in JSON: text when it is valid UTF-8 without NUL, else base64. */
export function encodeContent(buf: Buffer): { encoding: 'utf-8' | 'base64'; content: string } {
  const text = buf.includes(0) ? undefined : decodeUtf8(buf);
  return text === undefined
    ? { encoding: 'base64', content: buf.toString('base64') }
    : { encoding: 'utf-8', content: text };
}

/** The YAML between the opening and closing `---` lines of SKILL.md, parsed; or the problems. */
export function parseFrontMatter(text: string): SkillFrontMatter | FieldError[] {
  const field = fileField(SKILL_MD);
  const bad = (message: string) => [problem(field, message, 'skill.front_matter')];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---')
    return bad(
      'SKILL.md must start with YAML front matter: a "---" line, name and description, a "---" line',
    );
  const end = lines.findIndex((l, i) => i > 0 && (l.trimEnd() === '---' || l.trimEnd() === '...'));
  if (end < 0) return bad('the front matter of SKILL.md is not closed by a "---" line');
  const yaml = lines.slice(1, end).join('\n');
  if (Buffer.byteLength(yaml) > SKILL_LIMITS.frontMatterBytes)
    return bad(`the front matter of SKILL.md is larger than ${SKILL_LIMITS.frontMatterBytes} bytes`);
  let data: unknown;
  try {
    data = load(yaml);
  } catch (err) {
    return bad(`the front matter of SKILL.md is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return bad('the front matter of SKILL.md must be a YAML mapping with name and description');
  const { name, description } = data as Record<string, unknown>;
  const problems: FieldError[] = [];
  if (typeof name !== 'string' || name.trim() === '')
    problems.push(
      problem(field, 'the front matter of SKILL.md has no name (a string)', 'skill.front_matter'),
    );
  else if (!SKILL_NAME.test(name))
    problems.push(
      problem(
        field,
        `the front matter name "${name.slice(0, 80)}" is not a valid skill name (${SKILL_NAME.source})`,
        'skill.front_matter',
      ),
    );
  if (typeof description !== 'string' || description.trim() === '')
    problems.push(
      problem(field, 'the front matter of SKILL.md has no description (a string)', 'skill.front_matter'),
    );
  else if (description.length > SKILL_LIMITS.descriptionChars)
    problems.push(
      problem(
        field,
        `the description is longer than ${SKILL_LIMITS.descriptionChars} characters`,
        'skill.front_matter',
      ),
    );
  if (problems.length > 0) return problems;
  return { name: name as string, description: (description as string).trim() };
}

/** sha256 over the sorted paths, modes and contents. */
export function contentHash(files: SkillFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    h.update(`${f.path}\0${f.executable ? 'x' : '-'}\0${f.content.length}\0`);
    h.update(f.content);
  }
  return h.digest('hex');
}

/**
 * Every rule a skill folder must meet. `urlName` is the `{name}` of the URL,
 * which must equal the front matter's name. Returns the skill or all problems.
 */
export function checkSkill(files: SkillFile[], urlName: string): CheckedSkill | FieldError[] {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  let totalBytes = 0;
  for (const f of files) {
    const why = skillPathProblem(f.path);
    if (why) problems.push(problem(fileField(f.path), why, 'skill.path'));
    else if (seen.has(f.path))
      problems.push(problem(fileField(f.path), 'the path appears more than once', 'skill.duplicate_path'));
    seen.add(f.path);
    totalBytes += f.content.length;
  }
  // A path cannot be both a file and a folder ("a" and "a/b").
  for (const p of seen) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (seen.has(dir)) {
        problems.push(
          problem(fileField(dir), `"${dir}" is a file but "${p}" puts a folder there`, 'skill.path'),
        );
        break;
      }
    }
  }
  if (files.length > SKILL_LIMITS.files)
    problems.push(
      problem(
        'body',
        `a skill has at most ${SKILL_LIMITS.files} files (got ${files.length})`,
        'skill.too_many_files',
      ),
    );
  if (totalBytes > SKILL_LIMITS.totalBytes)
    problems.push(
      problem(
        'body',
        `a skill's files total at most ${SKILL_LIMITS.totalBytes} bytes uncompressed (got ${totalBytes})`,
        'skill.too_large',
      ),
    );
  const md = files.find((f) => f.path === SKILL_MD);
  if (!md) {
    problems.push(
      problem(
        'body',
        'the skill has no SKILL.md at its root (paths are case-sensitive)',
        'skill.missing_skill_md',
      ),
    );
    return problems;
  }
  const skillMd = decodeUtf8(md.content);
  if (skillMd === undefined) {
    problems.push(problem(fileField(SKILL_MD), 'SKILL.md is not valid UTF-8 text', 'skill.front_matter'));
    return problems;
  }
  const front = parseFrontMatter(skillMd);
  if (Array.isArray(front)) return [...problems, ...front];
  if (front.name !== urlName)
    problems.push(
      problem(
        'name',
        `the URL names the skill "${urlName}" but SKILL.md's front matter says "${front.name}"`,
        'skill.name_mismatch',
      ),
    );
  if (problems.length > 0) return problems;
  return { ...front, files, totalBytes, contentHash: contentHash(files), skillMd };
}
