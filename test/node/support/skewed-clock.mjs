// Loaded into a ferry child with `node --import` (NODE_OPTIONS): its clock
// reads FERRY_TEST_CLOCK_SKEW_MS off the real one, as on a host whose clock
// drifted. Only the child's: the server and the test keep the real time.
const skew = Number(process.env.FERRY_TEST_CLOCK_SKEW_MS ?? 0);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);

class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + skew);
    else super(...args);
  }

  static now() {
    return realNow() + skew;
  }
}

globalThis.Date = SkewedDate;
