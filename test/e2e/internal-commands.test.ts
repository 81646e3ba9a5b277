/** The in-pod modes are internal commands: runnable by aicr's own Jobs, absent from help and suggestions. */
import { expect, test } from "bun:test";
import { aicr, baseEnv } from "./_aicr.ts";

test("--help lists neither internal command; the public ones are all there", async () => {
  const r = await aicr(["--help"]);
  expect(r.code).toBe(0);
  // A command's row starts two spaces in (a wrapped description line is indented further).
  for (const name of ["snapshot", "validate", "render-rbac", "cleanup-legacy", "image", "version"])
    expect(r.stdout).toMatch(new RegExp(`^ {2}${name}\\b`, "m"));
  expect(r.stdout).not.toMatch(/^ {2}agent\b/m);
  expect(r.stdout).not.toMatch(/^ {2}validator\b/m);
  const validate = await aicr(["validate", "--help"]);
  expect(validate.stdout).not.toContain("--validator");
});

test("a near-miss is never pointed at an internal command", async () => {
  const r = await aicr(["agnt"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('unknown command "agnt"');
  expect(r.stderr).not.toContain("did you mean");
  expect(r.stderr).not.toMatch(/use one of:.*\bagent\b/);
});

test("the validator needs its check: exit 2 before anything else", async () => {
  const r = await aicr(["validator"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/check/i);
});

test("AICR_AGENT_MODE=true routes `aicr snapshot` to the agent: outside a pod it needs a cluster (exit 6), and never deploys a Job", async () => {
  const r = await aicr(["snapshot", "-o", "cm://ns/x"], {
    env: baseEnv({ AICR_AGENT_MODE: "true", KUBERNETES_SERVICE_HOST: "", KUBECONFIG: "/nonexistent" }),
  });
  expect(r.stderr).toContain("aicr agent: runID=");
  expect(r.code).not.toBe(0);
  expect(r.stderr).not.toContain("permissions checked");
});
