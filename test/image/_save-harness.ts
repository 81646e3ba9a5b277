/**
 * Compiled by image.test.ts with the runtime layer and image info embedded the way scripts/build.ts
 * embeds them, so saveImage reads a real Bun.embeddedFiles: argv = output executable version revision repository.
 */
import { saveImage } from "../../src/image/save.ts";

const [output, executable, version, revision, repository] = process.argv.slice(2);
const saved = await saveImage({
  output: output!,
  executable: executable!,
  embedded: Bun.embeddedFiles,
  version: version!,
  revision: revision!,
  repository: repository!,
});
const names = Bun.embeddedFiles.map((f) => (f as Blob & { name?: string }).name);
process.stdout.write(`${JSON.stringify({ ...saved, names })}\n`);
