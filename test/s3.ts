import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';

// As src/storage/s3.ts: the pinned SDK supports Node 20; its notice about later versions is not for test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const MAIN = new URL('./s3rver-main.js', import.meta.url).pathname;
export const S3_BUCKET = 'fsm-test';
/** s3rver's one account. */
const KEY = 'S3RVER';

/** A real S3-compatible server (s3rver) in a child process, on a random port, with a temporary directory. */
export interface TestS3 {
  endpoint: string;
  /** The settings that point the server at it (FILES_STORE=s3 and the S3_* variables). */
  env: Record<string, string>;
  client: S3Client;
  /** Kills the store at once (SIGKILL), as a store that goes down. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory. */
  start(): Promise<void>;
  /** Keys of the bucket's objects under a prefix. */
  keys(prefix?: string): Promise<string[]>;
  /** Multipart uploads begun and neither completed nor aborted. */
  uploads(): Promise<string[]>;
  /** Whether `files/<sha256>` exists, and its bytes. */
  stored(sha256: string): Promise<boolean>;
  bytes(sha256: string): Promise<Buffer>;
  close(): Promise<void>;
}

export async function startS3(opts: { timeout?: string } = {}): Promise<TestS3> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fsm-s3-'));
  let port = 0;
  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  const start = async () => {
    const c = spawn(process.execPath, [MAIN, dir, String(port), S3_BUCKET], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    exited = new Promise((resolve) => c.once('exit', resolve));
    let out = '';
    port = await new Promise<number>((resolve, reject) => {
      c.stdout!.on('data', (d) => {
        out += d;
        const m = /s3rver listening on (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      c.stderr!.on('data', (d) => (out += d));
      c.once('exit', (code) => reject(new Error(`s3rver exited with ${code}: ${out}`)));
    });
  };
  const kill = async () => {
    child?.kill('SIGKILL');
    await exited;
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: KEY, secretAccessKey: KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const keys = async (prefix = '') => {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: prefix, ContinuationToken: token }),
      );
      out.push(...(page.Contents ?? []).map((o) => o.Key!));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort();
  };
  return {
    endpoint,
    env: {
      FILES_STORE: 's3',
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_BUCKET,
      S3_ACCESS_KEY_ID: KEY,
      S3_SECRET_ACCESS_KEY: KEY,
      S3_FORCE_PATH_STYLE: '1',
      S3_TIMEOUT: opts.timeout ?? '3s',
    },
    client,
    kill,
    start,
    keys,
    async uploads() {
      const res = await client.send(new ListMultipartUploadsCommand({ Bucket: S3_BUCKET }));
      return (res.Uploads ?? []).map((u) => `${u.Key} ${u.UploadId}`);
    },
    async stored(sha256) {
      return client.send(new HeadObjectCommand({ Bucket: S3_BUCKET, Key: `files/${sha256}` })).then(
        () => true,
        () => false,
      );
    },
    async bytes(sha256) {
      const got = await client.send(new GetObjectCommand({ Bucket: S3_BUCKET, Key: `files/${sha256}` }));
      return Buffer.from(await got.Body!.transformToByteArray());
    },
    async close() {
      await kill();
      client.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
