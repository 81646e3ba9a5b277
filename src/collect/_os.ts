import { readFirstHostFile, readHostFile } from "./_host-fs.ts";
import { parseKernelCmdline, parseModules, parseOsRelease } from "./_os-parse.ts";
import { collectSysctl } from "./_sysctl.ts";
import { type CollectorOptions, errorText, type Measurement, type Readings } from "./_types.ts";

const OS_RELEASE_PATHS = ["/etc/os-release", "/usr/lib/os-release"];

type SubtypeReader = (options: CollectorOptions) => Promise<Readings | undefined>;

const readRelease: SubtypeReader = async (o) => {
  const found = await readFirstHostFile(o.hostRoot, OS_RELEASE_PATHS);
  return found && parseOsRelease(found.content);
};

const readGrub: SubtypeReader = async (o) => {
  const content = await readHostFile(o.hostRoot, "/proc/cmdline");
  return content === undefined ? undefined : parseKernelCmdline(content);
};

const readKmod: SubtypeReader = async (o) => {
  const content = await readHostFile(o.hostRoot, "/proc/modules");
  return content === undefined ? undefined : parseModules(content);
};

const SUBTYPES: readonly [string, SubtypeReader][] = [
  ["release", readRelease],
  ["grub", readGrub],
  ["kmod", readKmod],
  ["sysctl", collectSysctl],
];

/**
 * OS: release, grub, kmod, sysctl — read concurrently. A subtype whose source is absent (a kernel
 * built without modules has no /proc/modules) is left out; one that cannot be read is left out with
 * a warning; neither stops the others. A timeout fails the whole collector.
 */
export async function collectOs(options: CollectorOptions): Promise<Measurement> {
  const results = await Promise.all(
    SUBTYPES.map(async ([subtype, read]) => {
      try {
        const data = await read(options);
        if (data === undefined) options.log.debug("OS subtype source not found; left out", { subtype });
        return data && { subtype, data };
      } catch (err) {
        if (options.signal.aborted) throw err;
        options.log.warn("OS subtype could not be read; left out", { subtype, cause: errorText(err) });
        return undefined;
      }
    }),
  );
  return { type: "OS", subtypes: results.filter((s) => s !== undefined) };
}
