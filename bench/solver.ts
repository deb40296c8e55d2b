import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkSolution } from '../src/domain/planning/solver/check.js';
import { SolverWorker } from '../src/domain/planning/solver/in-worker.js';
import { toVroom } from '../src/domain/planning/solver/output.js';
import { parseProblem } from '../src/domain/planning/solver/parse.js';
import { parseSolomon, solomonDistance, solomonToVroom } from '../src/domain/planning/solver/solomon.js';

/**
 * The solver row (PRODUCT §15): the 56 Solomon instances (bench/data/solomon), each converted to
 * the problem `fsm solve` reads and solved the way it solves it (parseProblem, solve, toVroom),
 * one after the other on one worker thread, at BENCH_SOLVER_LIMITS seconds (comma-separated;
 * BENCH_SOLVER_LIMIT alone: one limit; default 2). Every answer is checked by checkSolution;
 * quality is the routes' Euclidean distance against the best known distance.
 */
const CLASSES = ['C1', 'C2', 'R1', 'R2', 'RC1', 'RC2'];
const VROOM = { average: 1.63, median: 1.12 };
export const SOLVER_TARGETS: Record<string, { average: number; median?: number }> = {
  '2': { average: 1.5, median: 1.0 },
  '0.5': { average: 3 },
};

export interface SolverBenchResult {
  limit: number;
  lines: string[];
  /** Average and median gap to the best known distances, in %. */
  average: number;
  median: number;
  /** Instances with an infeasible answer or a job left out. */
  failures: number;
  ok: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} %`;

export async function benchSolver(root: string, log: (s: string) => void): Promise<SolverBenchResult[]> {
  const dir = path.join(root, 'bench', 'data', 'solomon');
  const bks = JSON.parse(fs.readFileSync(path.join(dir, 'BKS-solomon.json'), 'utf8')) as Record<
    string,
    { best_known_cost: number }
  >;
  const only = process.env.BENCH_SOLVER_INSTANCES?.split(',');
  const files = fs
    .readdirSync(path.join(dir, 'instances'))
    .filter((f) => f.endsWith('.txt') && (!only || only.includes(f.replace('.txt', ''))))
    .sort();
  const limits = (process.env.BENCH_SOLVER_LIMITS ?? process.env.BENCH_SOLVER_LIMIT ?? '2')
    .split(',')
    .map(Number)
    .filter((x) => x > 0);
  // BENCH_SOLVER_ITERATIONS: stop each solve after that many iterations too (runs comparable on a busy machine).
  const maxIterations = process.env.BENCH_SOLVER_ITERATIONS ? Number(process.env.BENCH_SOLVER_ITERATIONS) : undefined;
  const worker = new SolverWorker();
  const results: SolverBenchResult[] = [];
  try {
    for (const limit of limits) {
      const load = os.loadavg()[0].toFixed(1);
      const lines = [
        `solver: ${files.length} Solomon instances at ${limit} s each, one worker thread, seed 1 (load average ${load} on ${os.availableParallelism()} cores)`,
      ];
      const gaps: { name: string; gap: number }[] = [];
      let infeasible = 0;
      let failures = 0;
      let unserved = 0;
      let iterations = 0;
      for (const file of files) {
        const inst = parseSolomon(fs.readFileSync(path.join(dir, 'instances', file), 'utf8'));
        const problem = solomonToVroom(inst);
        const model = parseProblem(JSON.parse(JSON.stringify(problem)));
        const t = performance.now();
        const solution = await worker.solve(model, { timeLimitMs: limit * 1000, seed: 1, maxIterations });
        const ms = performance.now() - t;
        const answer = toVroom(model, solution);
        const errors = checkSolution(problem, answer);
        const distance = solomonDistance(inst, answer.routes);
        const best = bks[`${inst.name}_distance`]?.best_known_cost;
        const gap = best ? (100 * (distance - best)) / best : NaN;
        if (errors.length) infeasible++;
        if (errors.length || answer.unassigned.length) failures++;
        unserved += answer.unassigned.length;
        iterations += solution.iterations;
        gaps.push({ name: inst.name, gap });
        const line = `  ${inst.name.padEnd(6)} ${distance.toFixed(2).padStart(8)} vs ${String(best).padStart(8)}  ${pct(gap).padStart(9)}  ${String(answer.summary.routes).padStart(2)} routes  ${String(solution.iterations).padStart(7)} it  ${(ms / 1000).toFixed(2)} s${answer.unassigned.length ? `  ${answer.unassigned.length} UNASSIGNED` : ''}${errors.length ? `  INFEASIBLE: ${errors.slice(0, 3).join('; ')}` : ''}`;
        lines.push(line);
        log(line);
      }
      const all = gaps.map((g) => g.gap);
      const average = all.reduce((a, b) => a + b, 0) / all.length;
      const med = median(all);
      lines.push('  class   n   average    median');
      for (const c of CLASSES) {
        const xs = gaps.filter((g) => g.name.slice(0, -2) === c).map((g) => g.gap);
        if (xs.length)
          lines.push(
            `  ${c.padEnd(5)} ${String(xs.length).padStart(3)} ${pct(xs.reduce((a, b) => a + b, 0) / xs.length).padStart(9)} ${pct(median(xs)).padStart(9)}`,
          );
      }
      lines.push(
        `  all   ${String(all.length).padStart(3)} ${pct(average).padStart(9)} ${pct(med).padStart(9)}   (VROOM v1.12 published: ${pct(VROOM.average)} average, ${pct(VROOM.median)} median)`,
      );
      lines.push(
        `  ${infeasible} infeasible, ${unserved} jobs unassigned; ${Math.round(iterations / files.length)} iterations per instance on average`,
      );
      const target = SOLVER_TARGETS[String(limit)];
      let ok = infeasible === 0 && unserved === 0;
      const checks = [`all served and feasible: ${ok ? 'pass' : 'FAIL'}`];
      if (target) {
        const avgOk = average <= target.average;
        checks.push(`average ${pct(average)} <= ${pct(target.average)}: ${avgOk ? 'pass' : 'FAIL'}`);
        ok &&= avgOk;
        if (target.median !== undefined) {
          const medOk = med <= target.median;
          checks.push(`median ${pct(med)} <= ${pct(target.median)}: ${medOk ? 'pass' : 'FAIL'}`);
          ok &&= medOk;
        }
      }
      lines.push(`  targets at ${limit} s: ${checks.join('; ')}`);
      for (const l of lines.slice(-CLASSES.length - 4)) log(l);
      results.push({ limit, lines, average, median: med, failures, ok });
    }
  } finally {
    await worker.close();
  }
  return results;
}

// `node dist/bench/solver.js`: the solver row alone.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const results = await benchSolver(root, (s) => console.error(s));
  console.log(results.flatMap((r) => r.lines).join('\n'));
}
