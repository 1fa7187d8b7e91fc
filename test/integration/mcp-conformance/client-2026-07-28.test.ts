/**
 * The official MCP conformance suite's client scenarios of revision 2026-07-28,
 * with our platform as the client through its REST API only (the suite's
 * servers judge what reached them): test/conformance/client-suite.ts.
 * docs/mcp-conformance.md says how to run it and what it found.
 */
import { clientConformanceSuite } from '../../conformance/client-suite.js';

await clientConformanceSuite('2026-07-28');
