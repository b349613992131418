// Loaded with node --import on a Node.js older than 22, which lacks
// fs.globSync: @modelcontextprotocol/conformance imports it.
import { register } from 'node:module';
register('./hooks.mjs', import.meta.url);
