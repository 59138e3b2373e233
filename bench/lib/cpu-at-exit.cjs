// Preloaded (`node --require`) into every node process bench/lib/cli-process.ts
// times: the process's CPU time, user + system, as the last line of its
// stderr at exit. On a shared machine CPU time moves far less with the load
// than wall time does.
process.on("exit", () => {
  const { user, system } = process.cpuUsage();
  process.stderr.write(`\nferry-bench-cpu-us ${user + system}\n`);
});
