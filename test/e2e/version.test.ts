import { expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { aicr, baseEnv, ROOT } from "./_aicr.ts";

const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
  version: string;
  config: { imageRepository: string };
};
const OURS = `${pkg.config.imageRepository}:v${pkg.version}`;

test("version -o json: the version, the revision and date it was built from, and this project's image", async () => {
  const r = await aicr(["version", "-o", "json"]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  const info = JSON.parse(r.stdout) as Record<string, string>;
  expect(info).toMatchObject({
    version: pkg.version,
    image: OURS,
    imageRepository: pkg.config.imageRepository,
    platform: `linux/${process.arch === "x64" ? "amd64" : process.arch}`,
    runtime: "bun 1.4.5",
  });
  expect(info.revision).toMatch(/^([0-9a-f]{40}|unknown)$/);
  // The build date is the commit's (reproducible builds): never the wall clock of the build.
  const commit = Bun.spawnSync(["git", "log", "-1", "--format=%ct"], { stdout: "pipe" })
    .stdout.toString()
    .trim();
  if (info.revision !== "unknown")
    expect(info.built).toBe(new Date(Number(commit) * 1000).toISOString().replace(".000Z", "Z"));
});

test("version prints the same facts for people, and -o yaml for machines", async () => {
  const [text, yaml] = await Promise.all([aicr(["version"]), aicr(["version", "-o", "yaml"])]);
  expect(text.code).toBe(0);
  expect(text.stdout).toStartWith(`aicr ${pkg.version}\n`);
  expect(text.stdout).toContain(`image:     ${OURS}`);
  expect(parse(yaml.stdout)).toMatchObject({ version: pkg.version, image: OURS });
});

test("image list agrees with version: agent and validators run this build's image", async () => {
  const [list, version] = await Promise.all([
    aicr(["image", "list", "-o", "json"]),
    aicr(["version", "-o", "json"]),
  ]);
  expect(list.code).toBe(0);
  const { image } = JSON.parse(version.stdout) as { image: string };
  expect(JSON.parse(list.stdout)).toEqual({
    images: [
      { role: "agent", image, source: "default" },
      { role: "validator", image, source: "default" },
    ],
  });
  const quiet = await aicr(["image", "list", "-q"]);
  expect(quiet.stdout).toBe(`${image}\n`);
});

test("image list shows what AICR_IMAGE and AICR_VALIDATOR_IMAGE choose, and says so", async () => {
  const env = baseEnv({
    AICR_IMAGE: "registry.local:5000/aicr:v9",
    AICR_VALIDATOR_IMAGE: "registry.local:5000/v:1",
  });
  const r = await aicr(["image", "list"], { env });
  expect(r.code).toBe(0);
  expect(r.stdout.split("\n")).toEqual([
    "agent      registry.local:5000/aicr:v9  (AICR_IMAGE)",
    "validator  registry.local:5000/v:1  (AICR_VALIDATOR_IMAGE)",
    "",
  ]);
});

test("a bad -o exits 2 naming the value and the accepted forms", async () => {
  const r = await aicr(["version", "-o", "xml"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('invalid --output "xml": expected text, json or yaml');
  expect(r.stdout).toBe("");
});

test("the image group: usage without a subcommand, exit 2 on an unknown one or an unknown flag", async () => {
  const usage = await aicr(["image"]);
  expect(usage.code).toBe(0);
  expect(usage.stdout).toMatch(/aicr image <command>/);
  for (const verb of ["list", "push", "save"]) expect(usage.stdout).toMatch(new RegExp(`^  ${verb}\\s`, "m"));
  const unknown = await aicr(["image", "pul"]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('unknown command "image pul"');
  const flag = await aicr(["image", "list", "--quite"]);
  expect(flag.code).toBe(2);
  expect(flag.stderr).toContain('unknown flag "--quite" for "aicr image list"');
  const help = await aicr(["image", "list", "--help"]);
  expect(help.stdout).toContain("aicr image list");
});
