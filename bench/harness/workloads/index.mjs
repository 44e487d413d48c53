// The workloads, each run identically against every peer through the one client (client.mjs).
// A workload returns one sample: { metrics: { key: number | null }, status?, raw }. A metric is
// null when it does not apply (a peer that cannot resume has no "lost" count) and `status` says why.
//
// This file is what run.mjs (and report.test.mjs) import: the sizes every workload reads, full
// and quick, and the workloads in the order a round runs them. The workloads themselves moved
// out, by family, each file with the workloads it measures and the helpers only they use:
// w-calls.mjs (W0–W3: calls and a progress stream), w-resume.mjs (W4, W4b, W5: resumption and
// replay), w-held-streams.mjs (W6, W7: sessions holding a GET stream), m-modern.mjs (M1–M3: the
// 2026-07-28 era), t-tasks.mjs (T1, T2: tasks polled with tasks/get), t-task-streams.mjs (T3,
// T4: tasks/stream), e-events.mjs (E1, E2: MCP Events, emit to push and emits/s), e-webhooks.mjs (E3:
// MCP Events webhooks, emit to POST received, deliveries/s, rows per delivery and per retry), e-idle.mjs (E4: idle push streams),
// b-billed.mjs (B1: what Cloudflare bills), c-cold-start.mjs (C1: startup CPU, bundle size, a
// fresh process's first answers) and h-held-streams.mjs (H1: the Worker isolate's heap per held
// stream, every object behind it evicted); what several families use is in shared.mjs, which
// imports no family.
import { w0, w1, w2, w3 } from './w-calls.mjs';
import { w4, w4b, w5 } from './w-resume.mjs';
import { w6, w7 } from './w-held-streams.mjs';
import { m1, m2, m3 } from './m-modern.mjs';
import { t1, t2 } from './t-tasks.mjs';
import { t3, t4 } from './t-task-streams.mjs';
import { b1 } from './b-billed.mjs';
import { e1, e2 } from './e-events.mjs';
import { e3 } from './e-webhooks.mjs';
import { e4 } from './e-idle.mjs';
import { h1 } from './h-held-streams.mjs';
import { c1 } from './c-cold-start.mjs';

export const SIZES = {
  full: {
    w0Sessions: 200,
    w0Warmup: 10,
    w1Calls: 300,
    w1Warmup: 10,
    w2Sessions: 16,
    w2Calls: 40,
    w3N: 5_000,
    w3Runs: 5,
    w4N: 2_000,
    w4AbortAt: 1_000,
    w4Runs: 3,
    w4bN: 200,
    w4bWaitMs: 500,
    w5BigLog: 100_000,
    w5SmallLog: 1_000,
    w5Replay: 1_000,
    w5FillerCall: 1_000,
    w5Repeats: 15,
    w5RebuildAfterMs: 480_000,
    w6Sessions: 1_000,
    w6Batch: 50,
    w6SettleMs: 1_000,
    w7Sessions: 100,
    w7Batch: 20,
    w7IdleMs: 60_000,
    w7Listeners: 10,
    m1Calls: 300,
    m1Warmup: 10,
    m2Clients: 16,
    m2Calls: 40,
    m3Changes: 50,
    t1Tasks: 200,
    t1Warmup: 10,
    t2Gets: 300,
    t2Warmup: 10,
    b1Sessions: 20,
    b1Calls: 50,
    b1ProgressN: 1_000,
    b1ProgressCalls: 5,
    b1Tasks: 20,
    b1IdleMs: 60_000,
    t4Tasks: 50,
    t4Warm: 5,
    t4Batch: 10,
    t4IdleMs: 60_000,
    e4Streams: 100,
    e4IdleMs: 60_000,
    e1Emits: 300,
    e1Warmup: 10,
    e2Emitters: 8,
    e2Emits: 100,
    /** Occurrences and empty polls counted with the billing counters on (E1; E2 spreads them over its emitters). */
    eBillingEmits: 40,
    eBillingPolls: 20,
    /** E3: occurrences each failing once (503), then delivered by their retry, counted with the counters on. */
    eBillingRetries: 10,
    /** How long a resumed stream may take to bring the result (W4, W4b, W5). */
    resumeTimeoutMs: 10_000,
    /** H1: streams held of each kind, opened this many at once, and how long eviction may take after each kind. */
    h1Streams: 1_000,
    h1Batch: 20,
    h1EvictionDeadlineMs: 240_000,
    /** C1, per round and Worker: `wrangler check startup` runs, thread-CPU runs, fresh processes per first request. */
    c1Profiles: 2,
    c1CpuRuns: 2,
    c1Fresh: 1,
  },
  quick: {
    w0Sessions: 30,
    w0Warmup: 3,
    w1Calls: 50,
    w1Warmup: 3,
    w2Sessions: 6,
    w2Calls: 8,
    w3N: 1_000,
    w3Runs: 2,
    w4N: 2_000,
    w4AbortAt: 1_000,
    w4Runs: 1,
    w4bN: 200,
    w4bWaitMs: 500,
    w5BigLog: 4_000,
    w5SmallLog: 1_000,
    w5Replay: 1_000,
    w5FillerCall: 1_000,
    w5Repeats: 5,
    w5RebuildAfterMs: 480_000,
    w6Sessions: 50,
    w6Batch: 25,
    w6SettleMs: 300,
    w7Sessions: 10,
    w7Batch: 10,
    w7IdleMs: 60_000,
    w7Listeners: 3,
    m1Calls: 50,
    m1Warmup: 3,
    m2Clients: 6,
    m2Calls: 8,
    m3Changes: 10,
    t1Tasks: 30,
    t1Warmup: 3,
    t2Gets: 50,
    t2Warmup: 3,
    b1Sessions: 5,
    b1Calls: 10,
    b1ProgressN: 1_000,
    b1ProgressCalls: 2,
    b1Tasks: 5,
    b1IdleMs: 60_000,
    t4Tasks: 10,
    t4Warm: 3,
    t4Batch: 10,
    t4IdleMs: 60_000,
    e4Streams: 100,
    e4IdleMs: 60_000,
    e1Emits: 50,
    e1Warmup: 3,
    e2Emitters: 8,
    e2Emits: 25,
    eBillingEmits: 16,
    eBillingPolls: 10,
    eBillingRetries: 5,
    resumeTimeoutMs: 1_500,
    h1Streams: 50,
    h1Batch: 10,
    h1EvictionDeadlineMs: 240_000,
    c1Profiles: 1,
    c1CpuRuns: 2,
    c1Fresh: 1,
  },
};

// W6 first: in round 1 it meets a fresh peer (see firstRoundOnly). B1, W7, T4 and E4 last: their idle
// minutes should follow the load of the others, as a quiet hour follows a busy one. C1 measures
// Workers of its own (fresh workerd processes), not the running peers, which sit idle meanwhile.
// H1 after the idle ones: its helper is its own fresh instance, and its waits for eviction are
// idle minutes too.
export const WORKLOADS = [w6, w0, w1, w2, w3, w4, w4b, w5, m1, m2, m3, t1, t2, t3, e1, e2, e3, c1, b1, w7, t4, e4, h1];
