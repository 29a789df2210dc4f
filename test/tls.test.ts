// The HTTPS material: operator-provided pair or a generated self-signed
// certificate reused across starts, and a TLS 1.2 floor checked against a
// real node:https server.
import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type ConnectionOptions } from "node:tls";
import { generate } from "selfsigned";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CIPHERS, loadOrCreateCertificate, MIN_TLS_VERSION, tlsServerOptions, validityProblem } from "../server/tls/certificate.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "agentd-tls-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshDir(): Promise<string> {
  return mkdtemp(join(root, "data-"));
}

async function listen(options: Parameters<typeof createServer>[0]): Promise<{ server: Server; port: number }> {
  const server = createServer(options, (_req, res) => res.end("ok"));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port };
}

/** Completes a TLS handshake or reports the error code, whichever happens. */
function handshake(options: ConnectionOptions): Promise<{ ok: true; protocol: string | null } | { ok: false; code: string }> {
  return new Promise((resolve) => {
    const socket = connect(options, () => {
      const protocol = socket.getProtocol();
      socket.end();
      resolve({ ok: true, protocol });
    });
    socket.on("error", (error: NodeJS.ErrnoException) => resolve({ ok: false, code: error.code ?? error.message }));
  });
}

describe("generated self-signed certificate", () => {
  it("is created once in <dataDir>/tls, with a private key file, and reused afterwards", async () => {
    const dataDir = await freshDir();
    const first = await loadOrCreateCertificate({ dataDir });
    expect(first.generated).toBe(true);
    expect(first.certPath).toBe(join(dataDir, "tls", "cert.pem"));
    expect(await readFile(first.certPath, "utf8")).toBe(first.cert);
    expect(await readFile(join(dataDir, "tls", "key.pem"), "utf8")).toBe(first.key);
    expect((await stat(join(dataDir, "tls", "key.pem"))).mode & 0o777).toBe(0o600);

    const x509 = new X509Certificate(first.cert);
    expect(first.fingerprint256).toBe(x509.fingerprint256);
    expect(first.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(x509.subject).toContain("CN=localhost");
    expect(x509.subjectAltName).toContain("DNS:localhost");
    expect(x509.subjectAltName).toContain("IP Address:127.0.0.1");
    expect(x509.subjectAltName).toMatch(/IP Address:(0:0:0:0:0:0:0:1|::1)/);
    expect(new Date(x509.validTo).getTime()).toBeGreaterThan(Date.now() + 365 * 24 * 3600 * 1000);

    const second = await loadOrCreateCertificate({ dataDir, certPath: null, keyPath: null });
    expect(second.generated).toBe(false);
    expect(second.fingerprint256).toBe(first.fingerprint256);
    expect(second.cert).toBe(first.cert);
    expect(second.key).toBe(first.key);
  });

  // Found by an operator's walk: on PostgreSQL the certificate made the data directory, 0755.
  it("makes a data directory that does not exist yet private to its user", async () => {
    const dataDir = join(await freshDir(), "data");
    // Under the usual umask, so that the test fails if the folder is made
    // with the default mode (a umask of 077 would make that 0700 too).
    const umask = process.umask(0o022);
    try {
      await loadOrCreateCertificate({ dataDir });
    } finally {
      process.umask(umask);
    }
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
  });

  it("concurrent first starts end up with one and the same pair", async () => {
    const dataDir = await freshDir();
    const results = await Promise.all([1, 2, 3].map(() => loadOrCreateCertificate({ dataDir })));
    const onDisk = await loadOrCreateCertificate({ dataDir });
    for (const result of results) expect(result.fingerprint256).toBe(onDisk.fingerprint256);
    expect(results.filter((r) => r.generated)).toHaveLength(1);
  });

  it("one not valid yet (made under a clock ahead of this one) is kept, and said to be the clock's doing", async () => {
    const dataDir = await freshDir();
    await loadOrCreateCertificate({ dataDir });
    expect((await loadOrCreateCertificate({ dataDir })).validityProblem).toBeNull();
    const day = 24 * 3600 * 1000;
    const ahead = await generate([{ name: "commonName", value: "localhost" }], {
      algorithm: "sha256",
      keySize: 2048,
      notBeforeDate: new Date(Date.now() + 2 * day),
      notAfterDate: new Date(Date.now() + 800 * day),
    });
    await writeFile(join(dataDir, "tls", "cert.pem"), ahead.cert);
    await writeFile(join(dataDir, "tls", "key.pem"), ahead.private, { mode: 0o600 });
    const material = await loadOrCreateCertificate({ dataDir });
    expect(material.cert).toBe(ahead.cert);
    const validFrom = new Date(new X509Certificate(ahead.cert).validFrom).toISOString();
    expect(material.validityProblem).toBe(
      `the generated certificate is not valid before ${validFrom}: the system clock is behind, and clients refuse every connection. Set the clock right and restart`,
    );
  });

  it("refuses half a generated pair instead of overwriting it", async () => {
    const dataDir = await freshDir();
    await loadOrCreateCertificate({ dataDir });
    await rm(join(dataDir, "tls", "key.pem"));
    await expect(loadOrCreateCertificate({ dataDir })).rejects.toThrow(/key\.pem is missing/);
  });

  it("serves HTTPS that a client trusting the printed certificate verifies for localhost and 127.0.0.1", async () => {
    const material = await loadOrCreateCertificate({ dataDir: await freshDir() });
    const { server, port } = await listen(tlsServerOptions(material));
    try {
      expect(await handshake({ host: "127.0.0.1", port, servername: "localhost", ca: material.cert })).toEqual({ ok: true, protocol: "TLSv1.3" });
      expect(await handshake({ host: "127.0.0.1", port, ca: material.cert })).toMatchObject({ ok: true });
      // Not trusted without the certificate: it really is self-signed.
      expect(await handshake({ host: "127.0.0.1", port, servername: "localhost" })).toEqual({ ok: false, code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    } finally {
      server.close();
    }
  });
});

describe("TLS version floor", () => {
  // An old client that OpenSSL itself would otherwise stop from offering TLS 1.1.
  const legacyClient = { minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0", rejectUnauthorized: false } as const;

  it("is TLS 1.2", () => {
    expect(MIN_TLS_VERSION).toBe("TLSv1.2");
    expect(tlsServerOptions({ cert: "c", key: "k" })).toEqual({ cert: "c", key: "k", ca: [], minVersion: "TLSv1.2", ciphers: CIPHERS });
  });

  it("refuses a TLS 1.1 client and accepts TLS 1.2", async () => {
    const material = await loadOrCreateCertificate({ dataDir: await freshDir() });
    const { server, port } = await listen(tlsServerOptions(material));
    try {
      const refused = await handshake({ host: "127.0.0.1", port, ...legacyClient });
      expect(refused.ok).toBe(false);
      expect(refused).toMatchObject({ code: expect.stringMatching(/PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL/) });
      expect(
        await handshake({ host: "127.0.0.1", port, maxVersion: "TLSv1.2", servername: "localhost", ca: material.cert }),
      ).toEqual({ ok: true, protocol: "TLSv1.2" });
    } finally {
      server.close();
    }
  });

  it("(control) the same TLS 1.1 client does connect to a server without the floor", async () => {
    const material = await loadOrCreateCertificate({ dataDir: await freshDir() });
    const { server, port } = await listen({ cert: material.cert, key: material.key, minVersion: "TLSv1", ciphers: "DEFAULT@SECLEVEL=0" });
    try {
      expect(await handshake({ host: "127.0.0.1", port, ...legacyClient })).toEqual({ ok: true, protocol: "TLSv1.1" });
    } finally {
      server.close();
    }
  });
});

describe("cipher suites (Mozilla intermediate)", () => {
  it("TLS 1.2 refuses suites without forward secrecy and CBC-SHA1 suites, and accepts ECDHE with AEAD; TLS 1.3 is offered", async () => {
    const material = await loadOrCreateCertificate({ dataDir: await freshDir() });
    const { server, port } = await listen(tlsServerOptions(material));
    const client = { host: "127.0.0.1", port, servername: "localhost", ca: material.cert } as const;
    const tls12 = (ciphers: string) => handshake({ ...client, maxVersion: "TLSv1.2", ciphers });
    try {
      for (const weak of ["AES128-SHA", "AES256-SHA", "AES128-GCM-SHA256", "AES256-GCM-SHA384", "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA384"]) {
        expect(await tls12(weak), weak).toMatchObject({ ok: false });
      }
      expect(await tls12("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256")).toEqual({ ok: true, protocol: "TLSv1.2" });
      expect(await tls12("ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-CHACHA20-POLY1305")).toEqual({ ok: true, protocol: "TLSv1.2" });
      expect(await handshake(client)).toEqual({ ok: true, protocol: "TLSv1.3" });
    } finally {
      server.close();
    }
  });

  it("(control) the same weak TLS 1.2 client does connect to a server with Node's default suites", async () => {
    const material = await loadOrCreateCertificate({ dataDir: await freshDir() });
    const { server, port } = await listen({ cert: material.cert, key: material.key, minVersion: "TLSv1.2" });
    try {
      expect(await handshake({ host: "127.0.0.1", port, servername: "localhost", ca: material.cert, maxVersion: "TLSv1.2", ciphers: "AES128-GCM-SHA256" })).toEqual({
        ok: true,
        protocol: "TLSv1.2",
      });
    } finally {
      server.close();
    }
  });
});

/** selfsigned's options for a CA certificate (a root or an intermediate). */
const AS_CA: NonNullable<Parameters<typeof generate>[1]> = {
  keyType: "ec",
  algorithm: "sha256",
  extensions: [
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
  ],
};

describe("operator-provided certificate (AGENTD_TLS_CERT / AGENTD_TLS_KEY)", () => {
  async function writePair(cn: string): Promise<{ certPath: string; keyPath: string; cert: string }> {
    const dir = await freshDir();
    const pems = await generate([{ name: "commonName", value: cn }], { algorithm: "sha256", keySize: 2048 });
    const certPath = join(dir, `${cn}.crt`);
    const keyPath = join(dir, `${cn}.key`);
    await writeFile(certPath, pems.cert);
    await writeFile(keyPath, pems.private, { mode: 0o600 });
    return { certPath, keyPath, cert: pems.cert };
  }

  it("is used as is and nothing is generated", async () => {
    const dataDir = await freshDir();
    const pair = await writePair("agentd.example.com");
    const material = await loadOrCreateCertificate({ dataDir, ...pair });
    expect(material.generated).toBe(false);
    expect(material.certPath).toBe(pair.certPath);
    expect(material.cert).toBe(pair.cert);
    expect(material.fingerprint256).toBe(new X509Certificate(pair.cert).fingerprint256);
    await expect(stat(join(dataDir, "tls"))).rejects.toMatchObject({ code: "ENOENT" });

    const { server, port } = await listen(tlsServerOptions(material));
    try {
      expect(await handshake({ host: "127.0.0.1", port, servername: "agentd.example.com", ca: pair.cert })).toMatchObject({ ok: true });
    } finally {
      server.close();
    }
  });

  it("is used even out of its validity period, which it says (clients refuse it); a valid one says nothing", async () => {
    const dataDir = await freshDir();
    const valid = await loadOrCreateCertificate({ dataDir, ...(await writePair("agentd.example.com")) });
    expect(valid.validityProblem).toBeNull();

    const day = 24 * 3600 * 1000;
    const dir = await freshDir();
    const expired = await generate([{ name: "commonName", value: "old.example.com" }], {
      algorithm: "sha256",
      keySize: 2048,
      notBeforeDate: new Date(Date.now() - 400 * day),
      notAfterDate: new Date(Date.now() - 35 * day),
    });
    const certPath = join(dir, "old.crt");
    const keyPath = join(dir, "old.key");
    await writeFile(certPath, expired.cert);
    await writeFile(keyPath, expired.private, { mode: 0o600 });
    const material = await loadOrCreateCertificate({ dataDir, certPath, keyPath });
    const validTo = new Date(new X509Certificate(expired.cert).validTo).toISOString();
    expect(material.validityProblem).toBe(
      `the certificate expired on ${validTo}: clients refuse every connection. Replace it (and its key) and restart: the files are read at start only`,
    );
    expect(material.cert).toBe(expired.cert);

    const validFrom = new Date(new X509Certificate(valid.cert).validFrom);
    expect(validityProblem(valid.cert, validFrom.getTime() - day)).toMatch(new RegExp(`^the certificate is not valid before ${validFrom.toISOString()}: clients refuse every connection`));
  });

  it("names an intermediate of the chain that is out of its validity period, the server's own being valid", async () => {
    const day = 24 * 3600 * 1000;
    const root = await generate([{ name: "commonName", value: "agentd test root" }], AS_CA);
    const intermediate = await generate([{ name: "commonName", value: "agentd old intermediate" }], {
      ...AS_CA,
      ca: { key: root.private, cert: root.cert },
      notBeforeDate: new Date(Date.now() - 400 * day),
      notAfterDate: new Date(Date.now() - 1 * day),
    });
    const leaf = await generate([{ name: "commonName", value: "agentd.example.com" }], {
      keyType: "ec",
      algorithm: "sha256",
      ca: { key: intermediate.private, cert: intermediate.cert },
    });
    const chain = `${leaf.cert}\n${intermediate.cert}\n`;
    const expired = new Date(new X509Certificate(intermediate.cert).validTo).toISOString();
    expect(validityProblem(chain, Date.now())).toBe(
      `certificate 2 of the chain (CN=agentd old intermediate) expired on ${expired}: clients that need it to reach a root they trust refuse the connection. Replace the chain and restart`,
    );
    expect(validityProblem(`${leaf.cert}\n`, Date.now())).toBeNull();
  });

  it("a chained file (leaf, then intermediate) is served whole: a client trusting only the root verifies it", async () => {
    // The server trusts no CAs itself (`ca: []`): the chain it presents must
    // come from the file alone.
    const root = await generate([{ name: "commonName", value: "agentd test root" }], AS_CA);
    const intermediate = await generate([{ name: "commonName", value: "agentd test intermediate" }], {
      ...AS_CA,
      ca: { key: root.private, cert: root.cert },
    });
    const leaf = await generate([{ name: "commonName", value: "agentd.example.com" }], {
      keyType: "ec",
      algorithm: "sha256",
      ca: { key: intermediate.private, cert: intermediate.cert },
    });
    const dir = await freshDir();
    const keyPath = join(dir, "leaf.key");
    await writeFile(keyPath, leaf.private, { mode: 0o600 });
    const client = { host: "127.0.0.1", servername: "agentd.example.com", ca: root.cert };

    const chainPath = join(dir, "fullchain.pem");
    // selfsigned ends its PEM without a newline.
    await writeFile(chainPath, `${leaf.cert}\n${intermediate.cert}\n`);
    const chained = await loadOrCreateCertificate({ dataDir: dir, certPath: chainPath, keyPath });
    const withChain = await listen(tlsServerOptions(chained));
    try {
      expect(await handshake({ ...client, port: withChain.port })).toMatchObject({ ok: true });
    } finally {
      withChain.server.close();
    }

    // The leaf alone: the client lacks the intermediate, so the check above
    // really depends on what the server sends.
    const leafPath = join(dir, "leaf.pem");
    await writeFile(leafPath, leaf.cert);
    const alone = await loadOrCreateCertificate({ dataDir: dir, certPath: leafPath, keyPath });
    const withoutChain = await listen(tlsServerOptions(alone));
    try {
      expect(await handshake({ ...client, port: withoutChain.port })).toEqual({ ok: false, code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
    } finally {
      withoutChain.server.close();
    }
  });

  it("only one of the two set is an error naming both variables", async () => {
    const pair = await writePair("one");
    await expect(loadOrCreateCertificate({ dataDir: await freshDir(), certPath: pair.certPath })).rejects.toThrow(
      /AGENTD_TLS_CERT and AGENTD_TLS_KEY/,
    );
    await expect(loadOrCreateCertificate({ dataDir: await freshDir(), keyPath: pair.keyPath })).rejects.toThrow(
      /AGENTD_TLS_CERT and AGENTD_TLS_KEY/,
    );
  });

  it("a missing, invalid or mismatched file is an error naming its variable", async () => {
    const dataDir = await freshDir();
    const a = await writePair("a");
    const b = await writePair("b");
    await expect(loadOrCreateCertificate({ dataDir, certPath: join(dataDir, "nope.crt"), keyPath: a.keyPath })).rejects.toThrow(
      /^AGENTD_TLS_CERT: cannot read .*nope\.crt \(ENOENT\)/,
    );
    await expect(loadOrCreateCertificate({ dataDir, certPath: a.certPath, keyPath: join(dataDir, "nope.key") })).rejects.toThrow(
      /^AGENTD_TLS_KEY: cannot read/,
    );
    const garbage = join(dataDir, "garbage.pem");
    await writeFile(garbage, "not a certificate\n");
    await expect(loadOrCreateCertificate({ dataDir, certPath: garbage, keyPath: a.keyPath })).rejects.toThrow(
      /^AGENTD_TLS_CERT .*not a PEM certificate/,
    );
    await expect(loadOrCreateCertificate({ dataDir, certPath: a.certPath, keyPath: garbage })).rejects.toThrow(
      /^AGENTD_TLS_KEY .*not an unencrypted PEM private key/,
    );
    await expect(loadOrCreateCertificate({ dataDir, certPath: a.certPath, keyPath: b.keyPath })).rejects.toThrow(
      /^AGENTD_TLS_KEY .*does not match/,
    );
  });
});
