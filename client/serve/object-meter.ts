/**
 * For the benchmarks only (bench/lib/object-cpu.ts): when `ferry serve`
 * runs with FERRY_METER_OBJECT=1 (launch.ts), the Worker's entry module is
 * this one instead of the bundle. It re-exports the bundle and puts a
 * subclass in the object's place whose methods note when the object is busy:
 * from the first call into it to the moment no call is left unsettled, one
 * stdout line `ferry-object-busy <start ms> <end ms>` (epoch ms; workerd's
 * clock runs in real time locally). The Worker, its object and the local R2
 * bucket share workerd's one thread, so the process's CPU alone cannot say
 * which of them worked: the bench integrates the thread's CPU over these
 * spans. A span covers the object's own work and what it waits on (a body
 * streaming in, the disk); waiting costs no CPU, so only the work counts.
 */

/** The stdout marker bench/lib/object-cpu.ts reads. */
export const BUSY_MARKER = "ferry-object-busy";
export const METER_MODULE = "object-meter.mjs";
export const METER_ENV = "FERRY_METER_OBJECT";

/** The entry module, importing the bundle by its module name (`bundle`) and metering `classes`. */
export function objectMeterSource(bundle: string, classes: readonly string[]): string {
  const from = JSON.stringify(bundle);
  return `import * as ferry from ${from};
export * from ${from};
export default ferry.default;

let open = 0;
let since = 0;
const enter = () => {
  if (open++ === 0) since = Date.now();
};
const leave = () => {
  if (--open === 0) console.log(\`${BUSY_MARKER} \${since} \${Date.now()}\`);
};

function metered(Base) {
  const Metered = class extends Base {};
  for (const name of Object.getOwnPropertyNames(Base.prototype)) {
  const own = Object.getOwnPropertyDescriptor(Base.prototype, name);
  if (name === "constructor" || typeof own?.value !== "function") continue;
  const method = own.value;
  Object.defineProperty(Metered.prototype, name, {
    ...own,
    value(...args) {
      enter();
      let out;
      try {
        out = method.apply(this, args);
      } catch (e) {
        leave();
        throw e;
      }
      if (typeof out?.then !== "function") {
        leave();
        return out;
      }
      return out.then(
        (v) => (leave(), v),
        (e) => {
          leave();
          throw e;
        },
      );
    },
  });
  }
  return Metered;
}
${classes.map((c) => `export const ${c} = metered(ferry.${c});`).join("\n")}
`;
}
