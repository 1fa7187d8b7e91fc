/**
 * The skills API on the real app and Postgres: uploads by zip and by JSON,
 * reads, replace, delete, every refused archive (a 400 naming the problem),
 * 404s, the sandbox warning, and cleanup with the agent.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type HttpResult, type Envelope, type TestApi } from '../helpers/api.js';
import { createProject } from '../helpers/factories.js';
import { createPrompt, db, insertAgent } from '../helpers/factories/content.js';
import { lieAboutSize, patchName, zipOf } from '../helpers/skill-zip.js';

const A = '/api/agent-server/agents';
const skillMd = (name: string, description = 'Reads and writes CSV files', body = '# CSV\nUse pandas.\n') =>
  `---\nname: ${name}\ndescription: ${description}\nlicense: MIT\n---\n${body}`;

interface SkillData {
  name: string;
  description: string;
  path: string;
  file_count: number;
  total_bytes: number;
  content_hash: string;
  warnings: string[];
  created_at: string;
  updated_at: string;
  skill_md?: string;
  files?: Array<{ path: string; size: number; executable: boolean; encoding?: string; content?: string }>;
  created?: boolean;
}

type Fields = Array<{ field: string; message: string; type: string }>;

describe('skills API', () => {
  let api: TestApi;
  let projectId: string;

  beforeAll(async () => {
    api = await startTestApi({ SANDBOX_ENABLED: 'true' });
    projectId = (await createProject(api)).id;
  });
  afterAll(async () => {
    await api?.close();
  });

  async function agent(sandbox = true): Promise<string> {
    const prompt = await createPrompt(api, projectId);
    const { id } = await insertAgent(api, projectId, { prompt_id: prompt.id });
    await db(api)('agents')
      .where({ id })
      .update({ sandbox: JSON.stringify({ enabled: sandbox, docker_image: null, require_approval: false }) });
    return id;
  }

  async function putZip(agentId: string, name: string, zip: Buffer, type = 'application/zip') {
    const res = await fetch(`${api.url}${A}/${agentId}/skills/${name}`, {
      method: 'PUT',
      headers: { 'content-type': type },
      body: zip,
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Envelope<SkillData> };
  }

  const putJson = (agentId: string, name: string, body: unknown) =>
    api.request<SkillData>('PUT', `${A}/${agentId}/skills/${name}`, body);

  /** A 400 whose field errors include one matching each expectation. */
  function expect400(res: { status: number; text: string; body: Envelope<unknown> }, ...want: object[]) {
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ error: true, message: 'Invalid request', status: 400, data: {} });
    const fields = res.body.errorDetails.fields as Fields;
    for (const w of want) expect(fields, res.text).toContainEqual(expect.objectContaining(w));
  }

  it('uploads a zipped folder, strips its top folder, and reads it back', async () => {
    const id = await agent();
    const png = randomBytes(64);
    const zip = await zipOf([
      { path: 'csv/', directory: true },
      { path: 'csv/SKILL.md', content: skillMd('csv') },
      { path: 'csv/scripts/clean.sh', content: '#!/bin/sh\necho clean\n', mode: 0o100755 },
      { path: 'csv/logo.png', content: png, compress: false },
      { path: '__MACOSX/csv/._SKILL.md', content: 'junk' },
    ]);
    const put = await putZip(id, 'csv', zip);
    expect(put.status, put.text).toBe(200);
    expect(put.body.data).toMatchObject({
      name: 'csv',
      description: 'Reads and writes CSV files',
      path: '/sandbox/skills/csv/SKILL.md',
      file_count: 3,
      created: true,
      warnings: [],
      skill_md: skillMd('csv'),
    });
    expect(put.body.data.files).toEqual([
      { path: 'SKILL.md', size: Buffer.byteLength(skillMd('csv')), executable: false },
      { path: 'logo.png', size: 64, executable: false },
      { path: 'scripts/clean.sh', size: 21, executable: true },
    ]);

    const got = await api.request<SkillData>('GET', `${A}/${id}/skills/csv`);
    expect(got.status).toBe(200);
    const { created: _c, ...withoutCreated } = put.body.data;
    expect(got.body.data).toEqual(withoutCreated);

    const full = await api.request<SkillData>('GET', `${A}/${id}/skills/csv?include=files`);
    expect(full.body.data.files).toContainEqual({
      path: 'logo.png',
      size: 64,
      executable: false,
      encoding: 'base64',
      content: png.toString('base64'),
    });
    expect(full.body.data.files).toContainEqual(
      expect.objectContaining({
        path: 'scripts/clean.sh',
        encoding: 'utf-8',
        content: '#!/bin/sh\necho clean\n',
      }),
    );

    const list = await api.request<SkillData[]>('GET', `${A}/${id}/skills`);
    expect(list.body.data).toEqual([
      {
        name: 'csv',
        description: 'Reads and writes CSV files',
        path: '/sandbox/skills/csv/SKILL.md',
        file_count: 3,
        total_bytes: put.body.data.total_bytes,
        content_hash: put.body.data.content_hash,
        warnings: [],
        created_at: put.body.data.created_at,
        updated_at: put.body.data.updated_at,
      },
    ]);
  });

  it('uploads JSON, replaces, treats an identical upload as a no-op, and deletes', async () => {
    const id = await agent();
    const first = await putJson(id, 'pdf', {
      files: {
        'SKILL.md': skillMd('pdf', 'Fills PDF forms'),
        'forms/blank.bin': { content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' },
        'run.py': { content: 'print(1)\n', executable: true },
      },
    });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({
      created: true,
      file_count: 3,
      total_bytes: first.body.data.total_bytes,
    });
    expect(first.body.data.files).toContainEqual({ path: 'forms/blank.bin', size: 4, executable: false });
    expect(first.body.data.files).toContainEqual({ path: 'run.py', size: 9, executable: true });

    const same = await putJson(id, 'pdf', {
      files: {
        'run.py': { content: 'print(1)\n', executable: true },
        'forms/blank.bin': { content: 'AAEC/w==', encoding: 'base64' },
        'SKILL.md': skillMd('pdf', 'Fills PDF forms'),
      },
    });
    expect(same.body.data).toMatchObject({
      created: false,
      content_hash: first.body.data.content_hash,
      updated_at: first.body.data.updated_at,
    });

    const replaced = await putJson(id, 'pdf', { files: { 'SKILL.md': skillMd('pdf', 'Merges PDFs') } });
    expect(replaced.body.data).toMatchObject({ created: false, description: 'Merges PDFs', file_count: 1 });
    expect(replaced.body.data.files!.map((f) => f.path)).toEqual(['SKILL.md']);
    expect(replaced.body.data.created_at).toBe(first.body.data.created_at);
    expect(replaced.body.data.updated_at > first.body.data.updated_at).toBe(true);

    const del = await api.request('DELETE', `${A}/${id}/skills/pdf`);
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({});
    expect((await api.request('GET', `${A}/${id}/skills/pdf`)).status).toBe(404);
    expect((await api.request('DELETE', `${A}/${id}/skills/pdf`)).status).toBe(404);
    expect((await api.request<SkillData[]>('GET', `${A}/${id}/skills`)).body.data).toEqual([]);
  });

  it('refuses bad archives with a 400 naming the problem, and stores nothing', async () => {
    const id = await agent();
    const ok = { path: 'SKILL.md', content: skillMd('x') };

    expect400(await putZip(id, 'x', await zipOf([{ path: 'README.md', content: 'hi' }])), {
      field: 'body',
      type: 'skill.missing_skill_md',
    });
    expect400(await putZip(id, 'x', await zipOf([{ path: 'SKILL.md', content: '# no front matter' }])), {
      field: 'files.SKILL.md',
      message: expect.stringMatching(/must start with YAML front matter/) as string,
    });
    expect400(await putJson(id, 'x', { files: { 'SKILL.md': '---\nname: x\n---\n' } }), {
      field: 'files.SKILL.md',
      message: expect.stringMatching(/no description/) as string,
    });
    expect400(await putJson(id, 'x', { files: { 'SKILL.md': skillMd('y') } }), {
      field: 'name',
      type: 'skill.name_mismatch',
    });
    // Entries a normal archiver refuses to write, forged in place.
    const escaping = patchName(
      await zipOf([ok, { path: 'xx/evil.sh', content: 'x' }]),
      'xx/evil.sh',
      '../evil.sh',
    );
    expect400(await putZip(id, 'x', escaping), {
      field: 'files.../evil.sh',
      message: expect.stringMatching(/escapes the skill folder/) as string,
    });
    const absolute = patchName(
      await zipOf([ok, { path: 'etc/passwd', content: 'x' }]),
      'etc/passwd',
      '/tc/passwd',
    );
    expect400(await putZip(id, 'x', absolute), {
      field: 'files./tc/passwd',
      message: expect.stringMatching(/absolute/) as string,
    });
    expect400(await putJson(id, 'x', { files: { 'SKILL.md': skillMd('x'), 'a/../../b': 'x' } }), {
      field: 'files.a/../../b',
      type: 'skill.path',
    });
    expect400(
      await putZip(id, 'x', await zipOf([ok, { path: 'link', content: '/etc/passwd', mode: 0o120777 }])),
      {
        field: 'files.link',
        message: expect.stringMatching(/symbolic links/) as string,
      },
    );
    expect400(
      await putZip(
        id,
        'x',
        await zipOf([ok, { path: 'a.txt', content: '1' }, { path: 'a.txt', content: '2' }]),
      ),
      {
        field: 'files.a.txt',
        type: 'skill.duplicate_path',
      },
    );
    expect400(await putJson(id, 'x', { files: { 'SKILL.md': skillMd('x'), a: '1', 'a/b': '2' } }), {
      field: 'files.a',
      type: 'skill.path',
    });
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, '']));
    expect400(await putJson(id, 'x', { files: { 'SKILL.md': skillMd('x'), ...many } }), { field: 'files' });
    const manyZip = await zipOf([
      ok,
      ...Array.from({ length: 500 }, (_, i) => ({ path: `f${i}`, content: '' })),
    ]);
    expect400(await putZip(id, 'x', manyZip), { field: 'body', type: 'skill.too_many_files' });
    expect400(await putZip(id, 'x', randomBytes(1000)), {
      field: 'body',
      message: expect.stringMatching(/not a readable zip/) as string,
    });
    expect400(await putJson(id, 'x', {}), { field: 'files' });
    expect400(await putJson(id, 'Bad_Name', { files: { 'SKILL.md': skillMd('x') } }), { field: 'name' });

    expect((await api.request<SkillData[]>('GET', `${A}/${id}/skills`)).body.data).toEqual([]);
  });

  it('refuses an entry whose bytes do not match its CRC-32, and names with bidirectional overrides', async () => {
    const id = await agent();
    const ok = { path: 'SKILL.md', content: skillMd('x') };
    // Stored, not deflated, so the content sits in the archive as written and can be altered in place.
    const altered = patchName(
      await zipOf([ok, { path: 'notes.txt', content: 'the original text', compress: false }]),
      'the original text',
      'the tampered text',
    );
    expect400(await putZip(id, 'x', altered), {
      field: 'files.notes.txt',
      message: expect.stringMatching(/CRC-32/) as string,
    });
    const spoofed = 'invoice\u202etxt.sh';
    expect400(await putZip(id, 'x', await zipOf([ok, { path: spoofed, content: 'x' }])), {
      field: `files.${spoofed}`,
      message: expect.stringMatching(/bidirectional/) as string,
    });
    expect400(await putJson(id, 'x', { files: { 'SKILL.md': skillMd('x'), [spoofed]: 'x' } }), {
      field: `files.${spoofed}`,
      type: 'skill.path',
    });
    expect((await api.request('GET', `${A}/${id}/skills`)).body.data).toEqual([]);
  });

  it('stops zip bombs at the unpacked cap, whatever their headers claim', async () => {
    const id = await agent();
    const bomb = await zipOf([
      { path: 'SKILL.md', content: skillMd('bomb') },
      { path: 'zeros', content: Buffer.alloc(20 * 1024 * 1024) },
    ]);
    expect(bomb.length).toBeLessThan(100_000);
    expect400(await putZip(id, 'bomb', bomb), { field: 'body', type: 'skill.too_large' });
    const liar = await putZip(id, 'bomb', lieAboutSize(bomb, 'zeros', 100));
    expect400(liar, { field: 'body' });
    // Many small entries that add up past the cap.
    const chunks = Array.from({ length: 11 }, (_, i) => ({
      path: `z${i}`,
      content: Buffer.alloc(1024 * 1024),
    }));
    expect400(
      await putZip(id, 'bomb', await zipOf([{ path: 'SKILL.md', content: skillMd('bomb') }, ...chunks])),
      {
        field: 'body',
        type: 'skill.too_large',
      },
    );
    expect((await api.request('GET', `${A}/${id}/skills/bomb`)).status).toBe(404);
  });

  it('answers 413 past the archive cap and 415 for other content types', async () => {
    const id = await agent();
    const big = await putZip(id, 'x', randomBytes(2 * 1024 * 1024 + 1));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: true, message: 'Payload too large', status: 413 });
    const text = await putZip(id, 'x', Buffer.from(skillMd('x')), 'text/markdown');
    expect(text.status).toBe(415);
    expect(text.body).toMatchObject({
      error: true,
      status: 415,
      errorDetails: {
        field: 'content-type',
        reason: expect.stringMatching(/application\/zip or application\/json/) as string,
      },
    });
  });

  it('answers 404 for an unknown agent, skill or project', async () => {
    const id = await agent();
    const nobody = randomUUID();
    const files = { files: { 'SKILL.md': skillMd('x') } };
    expect((await putJson(nobody, 'x', files)).status).toBe(404);
    expect(
      (await putZip(nobody, 'x', await zipOf([{ path: 'SKILL.md', content: skillMd('x') }]))).status,
    ).toBe(404);
    expect((await api.request('GET', `${A}/${nobody}/skills`)).status).toBe(404);
    expect((await api.request('GET', `${A}/${nobody}/skills/x`)).status).toBe(404);
    expect((await api.request('DELETE', `${A}/${nobody}/skills/x`)).status).toBe(404);
    expect((await api.request('GET', `${A}/${id}/skills/x`)).body).toMatchObject({
      status: 404,
      errorDetails: { resource: 'skill' },
    });
    expect((await putJson(id, 'x', files)).status).toBe(200);
    expect((await api.request('GET', `${A}/${id}/skills/x?project_id=${randomUUID()}`)).status).toBe(404);
    expect((await api.request('GET', `${A}/${id}/skills/x?project_id=${projectId}`)).status).toBe(200);
    expect((await api.request('GET', `${A}/not-a-uuid/skills`)).status).toBe(400);
  });

  it('warns when the agent cannot read its skills, but stores them', async () => {
    const noSandbox = await agent(false);
    const put = await putJson(noSandbox, 'x', { files: { 'SKILL.md': skillMd('x') } });
    expect(put.status).toBe(200);
    expect(put.body.data.warnings).toEqual([expect.stringMatching(/sandbox.enabled false/) as string]);
    const list = await api.request<SkillData[]>('GET', `${A}/${noSandbox}/skills`);
    expect(list.body.data[0]!.warnings).toHaveLength(1);

    const bare = await startTestApi(); // SANDBOX_ENABLED unset
    try {
      const withSandbox = await agent(true);
      const res: HttpResult<Envelope<SkillData>> = await bare.request<SkillData>(
        'PUT',
        `${A}/${withSandbox}/skills/x`,
        { files: { 'SKILL.md': skillMd('x') } },
      );
      expect(res.status).toBe(200);
      expect(res.body.data.warnings).toEqual([expect.stringMatching(/SANDBOX_ENABLED/) as string]);
    } finally {
      await bare.close();
    }
  });

  it('deleting the agent deletes its skills', async () => {
    const id = await agent();
    expect((await putJson(id, 'x', { files: { 'SKILL.md': skillMd('x'), 'a.txt': 'a' } })).status).toBe(200);
    const skill = await db(api)('agent_skills').where({ agent_id: id }).first<{ id: string }>('id');
    expect((await api.request('DELETE', `${A}/${id}`)).status).toBe(200);
    expect(await db(api)('agent_skills').where({ agent_id: id })).toEqual([]);
    expect(await db(api)('agent_skill_files').where({ skill_id: skill.id })).toEqual([]);
  });
});
