/**
 * Every file flag of every command, with an argv that makes the rest of the command line valid, so
 * the file is what is tested. files.test.ts gives each one every hostile kind; the check below keeps
 * the table whole: a command's flag whose value is a path (its value hint says so) that is not here
 * fails the suite until it is added.
 */

import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import { ROOT } from "../e2e/_aicr.ts";
import { SIGSTORE_KEY } from "../image/_sign-fixtures.ts";
import type { CountingServer, InputKind, Workspace } from "./_harness.ts";

export const FIXTURES = {
  snapshot: join(ROOT, "test/fixtures/diff/baseline.yaml"),
  target: join(ROOT, "test/fixtures/diff/target.yaml"),
  recipe: join(ROOT, "examples/recipe.yaml"),
  template: join(ROOT, "test/fixtures/templates/summary.tmpl"),
};

export interface FileFlag {
  /** `<command> <flag>`: the id known failures and reports use. */
  id: string;
  /** "input": a file aicr reads; "output": one it writes; "stdin": read from stdin. */
  role: "input" | "output" | "stdin";
  argv(path: string, ctx: { ws: Workspace; server: CountingServer }): string[];
  /** The kinds left out, and why (a kind whose content is the flag's own output is no leak). */
  skip?: Partial<Record<InputKind, string>>;
  /** The argv sets KUBECONFIG itself (the harness otherwise points it at the worker's kubeconfig). */
  env?: (path: string) => Record<string, string>;
}

const T = ["--timeout", "15s"];
/** A P-256 public key (aicr image verify --key), so the file under test is the only bad input. */
const VERIFY_KEY = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEbS9cCpZr5FOyQ3tb/+hv1hJsrxC6
mzObswhfJj3i4U4NafRpL6Z7HgV8cP05TjnbN95y0W1zt2vXsSB1d0fSGg==
-----END PUBLIC KEY-----
`;
/** A P-256 private key (aicr image sign --key): the archive under test is the only bad input. */
const SIGN_KEY = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({
  format: "pem",
  type: "pkcs8",
}) as string;
const ECHOED = "its content is what the flag prints (a template is literal text)";
const READINGS = "its settings become readings of the snapshot printed (the user's own file)";

export const FILE_FLAGS: FileFlag[] = [
  // aicr snapshot
  {
    id: "snapshot --template",
    role: "input",
    argv: (p) => ["snapshot", "--template", p, ...T],
    skip: { kubeconfig: ECHOED },
  },
  { id: "snapshot --oke-addons", role: "input", argv: (p) => ["snapshot", "--oke-addons", p, ...T] },
  { id: "snapshot --aks-gpu-pools", role: "input", argv: (p) => ["snapshot", "--aks-gpu-pools", p, ...T] },
  { id: "snapshot --gke-gpu-pools", role: "input", argv: (p) => ["snapshot", "--gke-gpu-pools", p, ...T] },
  {
    id: "snapshot --cluster-config",
    role: "input",
    argv: (p) => ["snapshot", "--local", "--cluster-config", p],
    skip: { kubeconfig: READINGS },
  },
  { id: "snapshot --config", role: "input", argv: (p) => ["snapshot", "--config", p, ...T] },
  { id: "snapshot --kubeconfig", role: "input", argv: (p) => ["snapshot", "--kubeconfig", p, ...T] },
  { id: "snapshot -o", role: "output", argv: (p) => ["snapshot", "-o", p, ...T] },
  { id: "snapshot --local -o", role: "output", argv: (p) => ["snapshot", "--local", "-o", p] },
  {
    id: "snapshot --add-roles-to-service-account (cwd)",
    role: "output",
    argv: () => ["snapshot", "--add-roles-to-service-account", "sa", "-n", "ns"],
  },
  // aicr validate
  {
    id: "validate -r",
    role: "input",
    argv: (p) => ["validate", "-r", p, "-s", FIXTURES.snapshot, "--no-cluster", "-t", "json"],
  },
  {
    id: "validate -s",
    role: "input",
    argv: (p) => ["validate", "-r", FIXTURES.recipe, "-s", p, "--no-cluster", "-t", "json"],
  },
  {
    // a URL nothing answers (the discard port): a CA file that passes its checks is not enough to fetch
    id: "validate --ca-file",
    role: "input",
    argv: (p) => [
      "validate",
      "-r",
      "https://127.0.0.1:9/recipe.yaml",
      "-s",
      FIXTURES.snapshot,
      "--no-cluster",
      "-t",
      "json",
      "--ca-file",
      p,
    ],
  },
  {
    id: "validate --config",
    role: "input",
    argv: (p) => ["validate", "--config", p, "-r", FIXTURES.recipe, "-s", FIXTURES.snapshot, "--no-cluster"],
  },
  {
    id: "validate --oke-addons",
    role: "input",
    argv: (p) => ["validate", "-r", FIXTURES.recipe, "--oke-addons", p, ...T],
  },
  {
    id: "validate --aks-gpu-pools",
    role: "input",
    argv: (p) => ["validate", "-r", FIXTURES.recipe, "--aks-gpu-pools", p, ...T],
  },
  {
    id: "validate --gke-gpu-pools",
    role: "input",
    argv: (p) => ["validate", "-r", FIXTURES.recipe, "--gke-gpu-pools", p, ...T],
  },
  {
    id: "validate --kubeconfig",
    role: "input",
    argv: (p) => ["validate", "-r", FIXTURES.recipe, "--kubeconfig", p, ...T],
  },
  {
    id: "validate -o",
    role: "output",
    argv: (p) => [
      "validate",
      "-r",
      FIXTURES.recipe,
      "-s",
      FIXTURES.snapshot,
      "--no-cluster",
      "-t",
      "json",
      "-o",
      p,
    ],
  },
  {
    id: "validate --junit",
    role: "output",
    argv: (p) => [
      "validate",
      "-r",
      FIXTURES.recipe,
      "-s",
      FIXTURES.snapshot,
      "--no-cluster",
      "-t",
      "json",
      "--junit",
      p,
    ],
  },
  // aicr diff
  { id: "diff -b", role: "input", argv: (p) => ["diff", "-b", p, "--target", FIXTURES.target] },
  { id: "diff --target", role: "input", argv: (p) => ["diff", "-b", FIXTURES.snapshot, "--target", p] },
  { id: "diff --fleet", role: "input", argv: (p) => ["diff", "--fleet", p] },
  {
    id: "diff --kubeconfig",
    role: "input",
    argv: (p) => ["diff", "-b", "cm://fuzz-ns/a", "--target", FIXTURES.target, "--kubeconfig", p],
  },
  // aicr image push / save
  {
    id: "image push <archive>",
    role: "input",
    argv: (p, { server }) => ["image", "push", p, `${server.host}/fuzz/aicr:1`, "--plain-http"],
  },
  {
    id: "image push --ca-file",
    role: "input",
    argv: (p, { ws, server }) => [
      "image",
      "push",
      ws.input("empty"),
      `${server.host}/fuzz/aicr:1`,
      "--ca-file",
      p,
    ],
  },
  {
    id: "image push --password-stdin",
    role: "stdin",
    argv: (_p, { ws, server }) => [
      "image",
      "push",
      ws.input("empty"),
      `${server.host}/fuzz/aicr:1`,
      "--username",
      "fuzz",
      "--password-stdin",
    ],
  },
  { id: "image save -o", role: "output", argv: (p) => ["image", "save", "-o", p] },
  // aicr image sign (the key is read first, then the archive)
  {
    id: "image sign <archive>",
    role: "input",
    argv: (p, { ws }) => ["image", "sign", p, "--key", ws.file(SIGN_KEY, "sign.pem")],
  },
  {
    id: "image sign --key",
    role: "input",
    argv: (p, { ws }) => ["image", "sign", ws.input("empty"), "--key", p],
  },
  {
    id: "image sign --password-stdin",
    role: "stdin",
    argv: (_p, { ws }) => [
      "image",
      "sign",
      ws.input("empty"),
      "--key",
      ws.file(SIGSTORE_KEY, "cosign.key"),
      "--password-stdin",
    ],
  },
  // aicr image verify
  {
    id: "image verify <image>",
    role: "input",
    argv: (p, { ws }) => ["image", "verify", p, "--key", ws.file(VERIFY_KEY, "verify.pub")],
  },
  {
    id: "image verify --key",
    role: "input",
    argv: (p, { server }) => ["image", "verify", `${server.host}/fuzz/aicr:1`, "--plain-http", "--key", p],
  },
  {
    id: "image verify --ca-file",
    role: "input",
    argv: (p, { ws, server }) => [
      "image",
      "verify",
      `${server.host}/fuzz/aicr:1`,
      "--key",
      ws.file(VERIFY_KEY, "verify.pub"),
      "--ca-file",
      p,
    ],
  },
  {
    id: "image verify --password-stdin",
    role: "stdin",
    argv: (_p, { ws, server }) => [
      "image",
      "verify",
      `${server.host}/fuzz/aicr:1`,
      "--key",
      ws.file(VERIFY_KEY, "verify.pub"),
      "--username",
      "fuzz",
      "--password-stdin",
    ],
  },
  {
    id: "validate --cncf-submission",
    role: "output",
    argv: (p) => [
      "validate",
      "-r",
      FIXTURES.recipe,
      "-s",
      FIXTURES.snapshot,
      "--no-cluster",
      "-t",
      "json",
      "--cncf-submission",
      p,
    ],
  },
  // aicr render-rbac
  { id: "render-rbac --dir", role: "output", argv: (p) => ["render-rbac", "sa", "-n", "ns", "--dir", p] },
  {
    id: "render-rbac --recipe",
    role: "input",
    // the rendered directory goes to the run's fresh working directory (--dir defaults to .)
    argv: (p) => ["render-rbac", "--recipe", p],
  },
  // the cluster commands' kubeconfig, as a flag and from the environment
  { id: "runs list --kubeconfig", role: "input", argv: (p) => ["runs", "list", "--kubeconfig", p] },
  {
    id: "runs list $KUBECONFIG",
    role: "input",
    argv: () => ["runs", "list"],
    env: (p) => ({ KUBECONFIG: p }),
  },
  {
    id: "runs delete --kubeconfig",
    role: "input",
    argv: (p) => ["runs", "delete", "20260101-000000-0123456789abcdef", "--dry-run", "--kubeconfig", p],
  },
  {
    id: "cleanup-legacy --kubeconfig",
    role: "input",
    argv: (p) => ["cleanup-legacy", "--dry-run", "--kubeconfig", p],
  },
];

/** Value hints that name a path: a flag with one of these must be in the table above. */
export const PATH_HINTS = ["file", "path", "src", "dest", "dir|file", "file.tar"];
/** Positionals that name a path, by `<command> <name>`. */
export const PATH_POSITIONALS = ["image push archive", "image sign archive", "image verify image"];
