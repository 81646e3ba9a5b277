import { describe, expect, test } from "bun:test";
import { maskUrl, maskUserinfo } from "../../../src/core/url.ts";

describe("maskUserinfo", () => {
  test("user:password@ before the host is masked, with or without a scheme; a path's @ is kept", () => {
    expect(maskUserinfo("https://admin:s3cret@example.com/r")).toBe("https://***@example.com/r");
    expect(maskUserinfo("admin:s3cret@registry.example.com/team/aicr")).toBe(
      "***@registry.example.com/team/aicr",
    );
    expect(maskUserinfo("registry.example.com/team/aicr@sha256:ab")).toBe(
      "registry.example.com/team/aicr@sha256:ab",
    );
    expect(maskUserinfo("https://example.com/a@b")).toBe("https://example.com/a@b");
  });
});

describe("maskUrl", () => {
  test("a URL without credentials or query is shown as is", () => {
    expect(maskUrl("https://example.com:8443/recipes/h100.yaml")).toBe(
      "https://example.com:8443/recipes/h100.yaml",
    );
    expect(maskUrl(new URL("https://example.com/r.yaml"))).toBe("https://example.com/r.yaml");
  });

  test("every query value, a bare query part and the fragment are masked; keys stay", () => {
    expect(maskUrl("https://s3.example.com/r.yaml?X-Amz-Signature=abc&X-Amz-Expires=300")).toBe(
      "https://s3.example.com/r.yaml?X-Amz-Signature=***&X-Amz-Expires=***",
    );
    expect(maskUrl("https://example.com/r?token=s3cret&&flag#part")).toBe(
      "https://example.com/r?token=***&&***#***",
    );
    expect(maskUrl("https://example.com/r?")).toBe("https://example.com/r?");
    expect(maskUrl("https://example.com/r#")).toBe("https://example.com/r#");
  });

  test("credentials and query together, and an @ inside the query does not fool it", () => {
    expect(maskUrl("https://u:p@example.com/r?token=a@b")).toBe("https://***@example.com/r?token=***");
    expect(maskUrl("https://example.com?token=a@b")).toBe("https://example.com?token=***");
  });

  test("an unparseable value is masked the same way", () => {
    expect(maskUrl("https://u:p@[::1/r?token=x")).toBe("https://***@[::1/r?token=***");
  });
});
