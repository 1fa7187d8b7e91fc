/** `npm run db:migrate` / `npm run db:rollback [--all]` against DATABASE_URL. */
import { loadConfigOrExit } from '../core/config.js';
import { createDb, migrateLatest, rollback } from '../core/db/knex.js';

const command = process.argv[2];
const config = loadConfigOrExit(process.env, { require: ['DATABASE_URL'] });
const db = createDb(config.databaseUrl!, { ssl: config.database.ssl });
try {
  if (command === 'migrate') {
    const applied = await migrateLatest(db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
  } else if (command === 'rollback') {
    const undone = await rollback(db, process.argv.includes('--all'));
    process.stdout.write(undone.length ? `rolled back: ${undone.join(', ')}\n` : 'nothing to roll back\n');
  } else {
    process.stderr.write('usage: db.ts migrate | rollback [--all]\n');
    process.exitCode = 2;
  }
} finally {
  await db.destroy();
}
