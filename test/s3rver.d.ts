declare module 's3rver' {
  import type { Server } from 'node:http';
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    configureBuckets?: { name: string }[];
  }
  /** A Koa application (s3rver 3.7): `middleware` is Koa's own list, run in order. */
  export default class S3rver {
    constructor(options: S3rverOptions);
    middleware: ((ctx: any, next: () => Promise<void>) => Promise<void> | void)[];
    httpServer?: Server;
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
