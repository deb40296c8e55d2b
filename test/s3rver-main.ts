import fs from 'node:fs';
import path from 'node:path';
import S3rver from 's3rver';

/**
 * An S3-compatible server for the tests (test/s3.ts starts it as a child process, so that a test
 * can kill it like a store that goes down): s3rver on 127.0.0.1 with one bucket, its objects in a
 * directory that outlives a restart.
 *
 * s3rver 3.7 answers ListMultipartUploads with 501 and AbortMultipartUpload with 405. The server
 * sends both, and the tests check through the S3 API that no multipart upload is left, so both
 * are added here over s3rver's own layout (a pending upload is the directory
 * `<bucket>/._S3rver_uploads/<uploadId>` holding its key and parts; s3rver removes it when the
 * upload completes).
 */
const [directory, portArg, bucket] = process.argv.slice(2);
const uploadsDir = path.join(directory, bucket, '._S3rver_uploads');
const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const server = new S3rver({
  address: '127.0.0.1',
  port: Number(portArg),
  directory,
  silent: true,
  configureBuckets: [{ name: bucket }],
});
server.middleware.unshift(async (ctx, next) => {
  const url = new URL(ctx.url, 'http://s3');
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (ctx.method === 'GET' && parts.length === 1 && parts[0] === bucket && url.searchParams.has('uploads')) {
    const prefix = url.searchParams.get('prefix') ?? '';
    const uploads = [];
    for (const id of fs.existsSync(uploadsDir) ? fs.readdirSync(uploadsDir) : []) {
      const key = fs.readFileSync(path.join(uploadsDir, id, 'key'), 'utf8');
      const stat = fs.statSync(path.join(uploadsDir, id));
      const initiated = new Date(stat.birthtimeMs || stat.mtimeMs).toISOString();
      if (key.startsWith(prefix))
        uploads.push(
          `<Upload><Key>${xml(key)}</Key><UploadId>${xml(id)}</UploadId><Initiated>${initiated}</Initiated></Upload>`,
        );
    }
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult><Bucket>${bucket}</Bucket><IsTruncated>false</IsTruncated>${uploads.join('')}</ListMultipartUploadsResult>`;
    return;
  }
  const uploadId = url.searchParams.get('uploadId');
  if (ctx.method === 'DELETE' && parts[0] === bucket && parts.length > 1 && uploadId) {
    const dir = path.join(uploadsDir, path.basename(uploadId));
    if (!fs.existsSync(dir)) {
      ctx.status = 404;
      ctx.type = 'application/xml';
      ctx.body =
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>no such upload</Message></Error>';
      return;
    }
    fs.rmSync(dir, { recursive: true, force: true });
    ctx.status = 204;
    return;
  }
  await next();
});
const { port } = await server.run();
console.log(`s3rver listening on ${port}`);
