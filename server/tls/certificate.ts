import { X509Certificate, createPrivateKey, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SecureContextOptions, TlsOptions } from "node:tls";
import { codeOf, PathFailure } from "../failure.js";
import { makePrivateDir } from "../private-dir.js";

/** Plain HTTP and TLS below 1.2 are never offered. */
export const MIN_TLS_VERSION = "TLSv1.2" as const;

export interface CertificateSource {
  /** The generated certificate lives in `<dataDir>/tls/`. */
  dataDir: string;
  /** AGENTD_TLS_CERT: both or neither with keyPath. */
  certPath?: string | null;
  /** AGENTD_TLS_KEY. */
  keyPath?: string | null;
}

export interface CertificateMaterial {
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
  /** Colon-separated SHA-256 of the certificate, as `openssl x509 -fingerprint -sha256` shows it. */
  fingerprint256: string;
  /** True when this call created a new self-signed certificate. */
  generated: boolean;
  /**
   * Why clients refuse the certificate now (out of its validity period),
   * with the remedy, or null. Said, not refused: the server starts, so an
   * operator who replaces the files restarts a running deployment rather
   * than one that would not start. An expired generated one is renewed
   * instead; one not valid yet means the clock went back.
   */
  validityProblem: string | null;
}

/**
 * Mozilla's "intermediate" configuration: TLS 1.3's suites, and in TLS 1.2
 * only ECDHE key exchange (forward secrecy) with AEAD ciphers, so no static
 * RSA key exchange and no CBC with SHA-1. Mozilla's list also has DHE
 * suites, which Node offers only with Diffie-Hellman parameters of our own;
 * every client that has ECDHE needs none.
 * https://ssl-config.mozilla.org/#server=nodejs&config=intermediate
 */
export const CIPHERS = [
  "TLS_AES_128_GCM_SHA256",
  "TLS_AES_256_GCM_SHA384",
  "TLS_CHACHA20_POLY1305_SHA256",
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
].join(":");

/** The options every HTTPS listener of the service uses. */
export function tlsServerOptions(material: Pick<CertificateMaterial, "cert" | "key">): TlsOptions & SecureContextOptions {
  return {
    cert: material.cert,
    key: material.key,
    // No trusted CAs. A server uses them only to verify client certificates,
    // which it never asks for; the chain it presents is the certificate
    // file's own. Without `ca`, Node builds its store of public root
    // certificates at the first TLS context, on the main thread, at every
    // start (docs/performance.md).
    ca: [],
    minVersion: MIN_TLS_VERSION,
    ciphers: CIPHERS,
  };
}

/**
 * The operator's certificate when AGENTD_TLS_CERT/AGENTD_TLS_KEY are set,
 * otherwise a self-signed one for localhost generated once into the data
 * directory and reused on every later start.
 */
export async function loadOrCreateCertificate(source: CertificateSource): Promise<CertificateMaterial> {
  const certPath = source.certPath || null;
  const keyPath = source.keyPath || null;
  if (certPath !== null || keyPath !== null) {
    if (certPath === null || keyPath === null) {
      throw new Error("AGENTD_TLS_CERT and AGENTD_TLS_KEY must be set together (or neither, for a generated self-signed certificate)");
    }
    const cert = await readPem(certPath, "AGENTD_TLS_CERT");
    const key = await readPem(keyPath, "AGENTD_TLS_KEY");
    const fingerprint256 = checkPair(cert, key, { cert: `AGENTD_TLS_CERT (${certPath})`, key: `AGENTD_TLS_KEY (${keyPath})` });
    return { cert, key, certPath, keyPath, fingerprint256, generated: false, validityProblem: validityProblem(cert, Date.now()) };
  }
  return loadOrGenerate(source.dataDir).catch((error: unknown) => {
    // A file the system refused (EACCES, ENOTDIR: a data directory the
    // service's user cannot write, typically on PostgreSQL, where nothing
    // else is kept there): say which certificate, and the two ways out.
    if (codeOf(error) === undefined) throw error;
    throw new PathFailure("read or create the self-signed certificate in", `${join(source.dataDir, "tls")} (AGENTD_DATA_DIR; or set AGENTD_TLS_CERT and AGENTD_TLS_KEY)`, error);
  });
}

async function loadOrGenerate(dataDir: string): Promise<CertificateMaterial> {
  const dir = join(dataDir, "tls");
  const certPath = join(dir, "cert.pem");
  const keyPath = join(dir, "key.pem");
  const existing = await readGenerated(certPath, keyPath);
  if (existing !== null) {
    const fingerprint256 = checkPair(existing.cert, existing.key, { cert: certPath, key: keyPath });
    const x509 = new X509Certificate(existing.cert);
    if (new Date(x509.validTo).getTime() > Date.now()) {
      const early = outOfValidity(x509, Date.now());
      // Not valid yet: made under a clock ahead of this one, which a new one would not mend.
      const problem = early === null ? null : `the generated certificate ${early}: the system clock is behind, and clients refuse every connection. Set the clock right and restart`;
      return { ...existing, certPath, keyPath, fingerprint256, generated: false, validityProblem: problem };
    }
    // Our own certificate ran out: keep it aside for reference and make a new one.
    await rename(dir, `${dir}.expired-${Date.now()}`).catch(ignoreMissing);
  }

  // Loaded only on the first start: every later start reuses the files.
  // selfsigned is CommonJS: its exports object is the module's default, both
  // under Node and in the bundle (scripts/bundle.ts), whose split chunks give
  // a CommonJS package no named exports.
  const { generate } = (await import("selfsigned")).default;
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keySize: 2048,
    algorithm: "sha256",
    notAfterDate: new Date(Date.now() + 825 * 24 * 3600 * 1000),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
        ],
      },
    ],
  });

  // Both files are written into a private temporary folder that is renamed
  // into place at once: a concurrent start either wins or reads the winner's
  // pair, never a certificate with someone else's key.
  // Private, as the embedded database makes it: on PostgreSQL the
  // certificate may be the first thing the data directory holds.
  makePrivateDir(dataDir);
  const staging = join(dataDir, `.tls-${randomBytes(6).toString("hex")}`);
  await mkdir(staging, { mode: 0o700 });
  try {
    await writeFile(join(staging, "key.pem"), pems.private, { mode: 0o600 });
    await writeFile(join(staging, "cert.pem"), pems.cert, { mode: 0o644 });
    try {
      await rename(staging, dir);
    } catch (error) {
      if (!isCode(error, "EEXIST", "ENOTEMPTY")) throw error;
      const winner = await readGenerated(certPath, keyPath);
      if (winner === null) throw error;
      const fingerprint256 = checkPair(winner.cert, winner.key, { cert: certPath, key: keyPath });
      return { ...winner, certPath, keyPath, fingerprint256, generated: false, validityProblem: null };
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  const fingerprint256 = new X509Certificate(pems.cert).fingerprint256;
  return { cert: pems.cert, key: pems.private, certPath, keyPath, fingerprint256, generated: true, validityProblem: null };
}

/** The generated pair, or null when there is none yet. Half a pair is an error, not a reason to overwrite. */
async function readGenerated(certPath: string, keyPath: string): Promise<{ cert: string; key: string } | null> {
  const cert = await readFile(certPath, "utf8").catch(nullWhenMissing);
  const key = await readFile(keyPath, "utf8").catch(nullWhenMissing);
  if (cert === null && key === null) return null;
  if (cert === null || key === null) {
    throw new Error(`${cert === null ? certPath : keyPath} is missing next to ${cert === null ? keyPath : certPath}; delete both to generate a new self-signed certificate`);
  }
  return { cert, key };
}

async function readPem(path: string, variable: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new Error(`${variable}: cannot read ${path} (${typeof code === "string" ? code : String(error)})`, { cause: error });
  }
}

/**
 * What is wrong, at `now`, with the operator's chain (the server's
 * certificate, then the rest of the file), said with its consequence and
 * its remedy, or null. The server's own out of its validity period fails
 * every client; a later one only the clients whose path to a root they
 * trust goes through it (one holding that root itself never looks).
 */
export function validityProblem(chain: string, now: number): string | null {
  const pems = chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  for (const [index, pem] of pems.entries()) {
    const x509 = new X509Certificate(pem);
    const out = outOfValidity(x509, now);
    if (out === null) continue;
    if (index === 0) return `the certificate ${out}: clients refuse every connection. Replace it (and its key) and restart: the files are read at start only`;
    const subject = x509.subject.replace(/\n/g, ", ");
    return `certificate ${index + 1} of the chain (${subject}) ${out}: clients that need it to reach a root they trust refuse the connection. Replace the chain and restart`;
  }
  return null;
}

/** `expired on …` or `is not valid before …`, or null while valid at `now`. */
function outOfValidity(x509: X509Certificate, now: number): string | null {
  if (new Date(x509.validTo).getTime() < now) return `expired on ${new Date(x509.validTo).toISOString()}`;
  if (new Date(x509.validFrom).getTime() > now) return `is not valid before ${new Date(x509.validFrom).toISOString()}`;
  return null;
}

/** Parses both PEMs, checks the key belongs to the certificate and returns the fingerprint. */
function checkPair(cert: string, key: string, names: { cert: string; key: string }): string {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new Error(`${names.cert}: not a PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new Error(`${names.key}: not an unencrypted PEM private key`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new Error(`${names.key}: private key does not match the certificate ${names.cert}`);
  }
  return x509.fingerprint256;
}

function isCode(error: unknown, ...codes: string[]): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && codes.includes(code);
}

function nullWhenMissing(error: unknown): null {
  if (isCode(error, "ENOENT")) return null;
  throw error;
}

function ignoreMissing(error: unknown): void {
  if (!isCode(error, "ENOENT")) throw error;
}
