import { basename, dirname } from "node:path";
import { writeFileAtomic, writeNewDirectory } from "../core/files.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { buildCncfSubmission } from "./_cncf.ts";
import { buildCtrf, buildJunit, buildTable, type CheckResult } from "./_report.ts";
import { writeReportConfigMap } from "./_report-cm.ts";
import type { ValidateOptions } from "./options.ts";

/** The report on stdout, -o <file> or -o cm:// (table or CTRF JSON), and JUnit XML with --junit. */
export async function writeReports(
  results: readonly CheckResult[],
  o: ValidateOptions,
  io: {
    version: string;
    start: number;
    stop: number;
    log: Logger;
    writeStdout: (t: string) => void;
    runId: string;
    signal: AbortSignal;
    connect: () => Promise<KubeClient>;
  },
): Promise<void> {
  const input = { version: io.version, start: io.start, stop: io.stop, results };
  const main = o.format === "table" ? buildTable(results) : `${JSON.stringify(buildCtrf(input), null, 2)}\n`;
  if (o.outputConfigMap) {
    const ref = o.outputConfigMap;
    await writeReportConfigMap(await io.connect(), ref, main, io);
    io.log.info(`report written to cm://${ref.namespace}/${ref.name} (key report.json; kept by cleanup)`);
  } else if (o.outputPath) {
    await writeFileAtomic(o.outputPath, main, { flag: "--output" });
    io.log.info(`report written to ${o.outputPath}`);
  } else io.writeStdout(main);
  if (o.junitPath) {
    await writeFileAtomic(o.junitPath, buildJunit(input), { flag: "--junit" });
    io.log.info(`JUnit report written to ${o.junitPath}`);
  }
  if (o.cncfSubmissionDir) {
    const files = buildCncfSubmission({ ...input, runId: io.runId });
    const dir = await writeNewDirectory(dirname(o.cncfSubmissionDir), basename(o.cncfSubmissionDir), {
      files,
      flag: "--cncf-submission",
      dirMode: 0o755,
      fileMode: 0o644,
    });
    if (files.length === 0)
      io.log.warn(`${dir}/ holds no evidence: no conformance check with a CNCF requirement ran to a result`);
    else io.log.info(`CNCF evidence written to ${dir}/: ${files.map((f) => f.file).join(", ")}`);
  }
}
