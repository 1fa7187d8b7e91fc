import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkSkill,
  normalizeTree,
  parseFrontMatter,
  skillPathProblem,
  type SkillFile,
} from '../../api/services/skill-files.js';
import { skillsPromptSection } from '../../activities/skills/skills.js';

const file = (p: string, content: string, executable = false): SkillFile => ({
  path: p,
  content: Buffer.from(content),
  executable,
});
const md = (front: string, body = '# Body\n') => `---\n${front}\n---\n${body}`;

describe('skill paths', () => {
  it('an accepted path always lands inside the skill folder, spelled canonically', () => {
    const segment = fc.oneof(
      fc.constantFrom('..', '.', '', 'a', 'SKILL.md', '~', 'C:', ' ', '\\..', '%2e%2e'),
      fc.string({ maxLength: 12 }),
    );
    const candidate = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => s.join('/')),
      fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => `/${s.join('/')}`),
    );
    fc.assert(
      fc.property(candidate, (p) => {
        if (skillPathProblem(p) !== undefined) return;
        const resolved = path.posix.resolve('/skill', p);
        expect(resolved.startsWith('/skill/')).toBe(true);
        expect(path.posix.normalize(p)).toBe(p);
        expect(path.join('/host/skill', p).startsWith('/host/skill/')).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it('names what is wrong', () => {
    expect(skillPathProblem('../x')).toMatch(/escapes the skill folder/);
    expect(skillPathProblem('a/../../x')).toMatch(/escapes/);
    expect(skillPathProblem('/etc/passwd')).toMatch(/absolute/);
    expect(skillPathProblem('C:/x')).toMatch(/absolute/);
    expect(skillPathProblem('a\\b')).toMatch(/backslash/);
    expect(skillPathProblem('a//b')).toMatch(/empty segment/);
    expect(skillPathProblem('a\u0000b')).toMatch(/control/);
    expect(skillPathProblem('scripts/run.py')).toBeUndefined();
  });

  it('strips one top folder and archiver litter, but never a root SKILL.md', () => {
    expect(
      normalizeTree([{ path: 'csv/SKILL.md' }, { path: 'csv/a/b.py' }, { path: '__MACOSX/csv/._SKILL.md' }]),
    ).toEqual([{ path: 'SKILL.md' }, { path: 'a/b.py' }]);
    expect(normalizeTree([{ path: 'SKILL.md' }, { path: 'x/y' }])).toEqual([
      { path: 'SKILL.md' },
      { path: 'x/y' },
    ]);
    expect(normalizeTree([{ path: 'a/SKILL.md' }, { path: 'b/x' }])).toHaveLength(2);
  });
});

describe('front matter', () => {
  it('reads name and description', () => {
    expect(parseFrontMatter(md('name: csv\ndescription: >\n  Work with\n  CSV files'))).toEqual({
      name: 'csv',
      description: 'Work with CSV files',
    });
    expect(parseFrontMatter(`\uFEFF---\r\nname: a\r\ndescription: b\r\n---\r\n`)).toEqual({
      name: 'a',
      description: 'b',
    });
  });

  it('rejects a missing, unclosed, invalid or incomplete front matter', () => {
    const message = (text: string) => {
      const r = parseFrontMatter(text);
      return Array.isArray(r) ? r.map((p) => p.message).join('; ') : 'accepted';
    };
    expect(message('# no front matter')).toMatch(/must start with YAML front matter/);
    expect(message('---\nname: a\ndescription: b\n')).toMatch(/not closed/);
    expect(message(md('name: [a'))).toMatch(/not valid YAML/);
    expect(message(md('- a\n- b'))).toMatch(/mapping/);
    expect(message(md('name: a'))).toMatch(/no description/);
    expect(message(md('description: d'))).toMatch(/no name/);
    expect(message(md('name: Bad Name\ndescription: d'))).toMatch(/not a valid skill name/);
    expect(message(md(`name: a\ndescription: ${'x'.repeat(1025)}`))).toMatch(/longer than 1024/);
  });
});

describe('checkSkill', () => {
  it('accepts a skill and hashes its content, mode included', () => {
    const files = [file('SKILL.md', md('name: csv\ndescription: d')), file('run.sh', 'echo', true)];
    const a = checkSkill(files, 'csv');
    const b = checkSkill([files[0]!, file('run.sh', 'echo', false)], 'csv');
    if (Array.isArray(a) || Array.isArray(b)) throw new Error('rejected');
    expect(a.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.contentHash).not.toBe(b.contentHash);
    expect(checkSkill([...files].reverse(), 'csv')).toMatchObject({ contentHash: a.contentHash });
  });

  it('reports every problem at once', () => {
    const r = checkSkill(
      [
        file('SKILL.md', md('name: other\ndescription: d')),
        file('a', 'x'),
        file('a/b', 'y'),
        file('../x', 'z'),
        file('dup', '1'),
        file('dup', '2'),
      ],
      'csv',
    );
    expect(Array.isArray(r)).toBe(true);
    expect(r).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'files.../x', type: 'skill.path' }),
        expect.objectContaining({ field: 'files.a', type: 'skill.path' }),
        expect.objectContaining({ field: 'files.dup', type: 'skill.duplicate_path' }),
        expect.objectContaining({ field: 'name', type: 'skill.name_mismatch' }),
      ]),
    );
  });
});

describe('skillsPromptSection', () => {
  it('is empty without skills', () => {
    expect(skillsPromptSection([])).toBe('');
  });

  it('lists each skill on one line with its path and says how to read it', () => {
    const text = skillsPromptSection([
      { name: 'csv', description: 'Work with\nCSV files' },
      { name: 'pdf', description: 'Fill PDF forms' },
    ]);
    expect(text).toContain('- csv: Work with CSV files (read /sandbox/skills/csv/SKILL.md)');
    expect(text).toContain('- pdf: Fill PDF forms (read /sandbox/skills/pdf/SKILL.md)');
    expect(text).toContain('execute_bash_commands');
  });
});
