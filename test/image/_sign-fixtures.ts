/**
 * Fixed inputs of the signing tests, made once by Go programs with the very code cosign runs:
 * go-securesystemslib v0.9.1's encrypted.Encrypt (what cosign generate-key-pair calls) and
 * golang.org/x/crypto/nacl/secretbox.Seal. Throwaway keys, used nowhere else.
 */

/** cosign generate-key-pair's format (standard scrypt, N = 65536), password "correct horse". */
export const SIGSTORE_KEY = `-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjo2NTUzNiwiciI6
OCwicCI6MX0sInNhbHQiOiJnd0Zzd3ZJQ245SWxxRitRL0dDWGVwYTQ0bEJqbWlX
cGkzTGN0bWIvT25rPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiJyS2Y1NE1BekpKTEhmblJ4d01Jd1h5RXAzV2dzSHEyTCJ9LCJj
aXBoZXJ0ZXh0IjoiWDFtdVUwZkd3aHh6NFdNeHJNV2hCc3hFUk9vaVJweVJub1BF
VnVaR1A0emlzdXFZMWpDL21JMTZ3dzNEQ0ZMVkxmSENZa2I5N2w0ckljMk8vN3FU
Vk1wbHdzQ0hmQjZFdXI0aHVCTDJQR29lTVE2amkyeUZrTUplRUYwbTZkWUJHTU1x
UDNPN0xWZ2VheStCaGUxVDFsQkVqejZUZ1hKR2hKUERNTmphRnZrd1cwSGN6S0Jx
ejhnSmxjVkY1NFFYcnlPYXhiREcrTzZxUEE9PSJ9
-----END ENCRYPTED SIGSTORE PRIVATE KEY-----
`;
export const SIGSTORE_KEY_PUB = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEjZ65F2H9g8D/LNsgAYQlnG8vIm7E
fEKHAiAv/rNVRUy3ylYrKXCQgg1kW9KOexCt8RrtG1onaJamy9jMon+Reg==
-----END PUBLIC KEY-----
`;
export const SIGSTORE_KEY_PASSWORD = "correct horse";

/** The older label with go-securesystemslib's legacy scrypt (N = 32768), empty password. */
export const COSIGN_KEY = `-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----
eyJrZGYiOnsibmFtZSI6InNjcnlwdCIsInBhcmFtcyI6eyJOIjozMjc2OCwiciI6
OCwicCI6MX0sInNhbHQiOiJQVnlrYzlXaklzRWRFNStNaTE1UThpUURTQ2xkR1dU
bGExejhVUlNpTjdzPSJ9LCJjaXBoZXIiOnsibmFtZSI6Im5hY2wvc2VjcmV0Ym94
Iiwibm9uY2UiOiJCUTZwRFl2amVIa0dObWQ1eURKMDlDMWtNUXFGT2VXaCJ9LCJj
aXBoZXJ0ZXh0IjoiQ2kxMWd2bnVxY2d6ZEs1R2JucmRSMU1qOEFhTGV0Y0RVQ2V2
TzNCV3haLy9jc0lPZC9OTU4zUWg2akxZdFFOb3gxWlU4d2V5eExtNWJKOXZ1QTBk
ZHBtYWNqZHA1eEkwdlZOU3E3ZFcybHVVMEhWSlhVRjQybVY4RUNUQTlZNWRkZDQz
TTVHSHAzczFyZnZmTVVIS2VFN255QTRwWTJrdUZQTXlET2FKbTFoZXMvNlcvSmh0
VGRDWjdIMWkxQy85QUdta0lXTG5kVU4vdXc9PSJ9
-----END ENCRYPTED COSIGN PRIVATE KEY-----
`;
export const COSIGN_KEY_PUB = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEvQd5csdvqZM+OgNAA+sVA1MSRzWG
XHkDoo8wHMunO2bbDoMUTlvyRP/4zRCfDsKqfZi3n7XtdccDUVCxz0Qtqw==
-----END PUBLIC KEY-----
`;

/**
 * secretbox.Seal(message, nonce, key) with key[i] = 7·i mod 256, nonce[i] = 255 - i and
 * message[i] = (13·i + n) mod 256 for a message of n bytes: [n, hex of the box].
 */
export const SECRETBOX_VECTORS: [number, string][] = [
  [0, "59e49b99c238ff0396827e39af1c5e44"],
  [1, "2b1b195be86d4bce19f38bc570be70ae84"],
  [
    63,
    "1e60a4d725c237ed0027ab39e7415bb2bafa765e9e877ca9e828bfa6ca7500831c7fd0fef221bb1ef70920798a212c4125eedcbd822a9e34f89542eceeeffb5f25ab198008d15ad68fed7a278d2d42",
  ],
  [
    64,
    "f41fc1f5d73c5fd8d2a40e8578b2ed62c5fb755f99867fa8e729bca7cd740382037ed3fff520b81ff80823788d202f401aefdfbc852b9d35f79441ede9eef85e3aaa1a810fd059d780ec79268a2c41c4",
  ],
  [
    65,
    "6f9c6aee92e331867ff1e5438eccc2eec4f8745098857eafe62abdb8cc770285027dd2f0f423b918f90b22478c232e471becdeb384289c32f69740f2e8edf9593ba91b8e0ed358d081ef78598b2f40c3b4",
  ],
  [
    200,
    "1dd953610d1611987fe61fdc272fd8f04d63cdd7110ee7107fa1343f75ec8b0a8bc64b777da800878080abc015d8a7c89277a7340da305cd6f1cc975917670d6b25282098758214f3864f1de1294c94c3d2f0a2f287b2de9de2dbbc52be1df9896a652a5df93618ca4157bebea9e3049d9067d6809dbcc128cdf5250b06aef16c281115c5d440b5d8ed280c25761f215e00c7d8691209a8d1510b534e956abf6207b15bb0b8d6e8be0b9dd7cf25ec5630f093a8648fa106d81b3004755fbc5b8a8d4a7502adcd4144029f9deff92b24fd6a1694e6087082b",
  ],
];
