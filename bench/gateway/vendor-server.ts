/** The scripted OpenAI-format vendor from the tests, in its own process for benchmarks; prints its URL. */
import { startOpenAiVendor } from '../../test/fixtures/vendors/openai.js';

const vendor = await startOpenAiVendor();
// The fixture records every request for tests; a benchmark only needs answers.
setInterval(() => (vendor.received.length = 0), 500).unref();
process.stdout.write(`${vendor.url}\n`);
