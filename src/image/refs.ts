/**
 * The images a run of this binary uses, by role, and where each reference comes from. Agent Jobs
 * and validator Jobs both run this binary (`aicr snapshot` in agent mode, `aicr validate
 * --validator`), so by default they use one image: this build's.
 */
import { DEFAULT_IMAGE } from "../core/version.ts";

export interface RunImage {
  role: "agent" | "validator";
  image: string;
  /** "default" (baked into this build) or the environment variable that set it. */
  source: "default" | "AICR_IMAGE" | "AICR_VALIDATOR_IMAGE";
}

export function runImages(env: Readonly<Record<string, string | undefined>>): RunImage[] {
  const agent: RunImage = env.AICR_IMAGE
    ? { role: "agent", image: env.AICR_IMAGE, source: "AICR_IMAGE" }
    : { role: "agent", image: DEFAULT_IMAGE, source: "default" };
  const validator: RunImage = env.AICR_VALIDATOR_IMAGE
    ? { role: "validator", image: env.AICR_VALIDATOR_IMAGE, source: "AICR_VALIDATOR_IMAGE" }
    : { ...agent, role: "validator" };
  return [agent, validator];
}
