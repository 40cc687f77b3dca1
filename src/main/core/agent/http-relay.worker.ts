/**
 * The worker thread of the agent endpoint's HTTP relay (./http-relay.ts): built
 * as its own entry (out/main/agent-relay.js, electron.vite.config.ts), started
 * by the endpoint with the relay's config as `workerData`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runRelay, type RelayConfig } from './http-relay';

if (parentPort) runRelay(parentPort, workerData as RelayConfig);
