/** The conformance and performance checks' code, by catalog name, each loaded only when its pod runs it. */
import type { CheckRun } from "./context.ts";

type Load = () => Promise<CheckRun>;

export const CHECK_RUNS: Readonly<Record<string, Load>> = {};
