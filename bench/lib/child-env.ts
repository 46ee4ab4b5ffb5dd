// The environment of the bench's own child servers (bare-route.ts, floor-server.ts): a missing
// variable stops the child at once with its name, which the parent shows from the child's output.

/** The value of `name`, or exit 2 saying that `program` needs it. */
export function need(program: string, name: string): string {
  const v = process.env[name];
  if (!v) {
    process.stderr.write(`${program}: ${name} is not set\n`);
    process.exit(2);
  }
  return v;
}
