import { formatNumber, formatRational, r, randomDecimal, withUnit, NAMES, type FamilyGenerator } from "./types.js";

/** Speed–distance–time, unit price, work rate and ratio-sharing word problems. */
export const rateProblems: FamilyGenerator = (rng, level) => {
  const name = rng.pick(NAMES);
  const kinds = level === 1 ? ["distance", "unit_price"] : level === 2 ? ["distance", "speed", "unit_price", "fill_time", "ratio"] : ["speed", "fill_time", "ratio", "two_legs", "meet"];
  switch (rng.pick(kinds)) {
    case "distance": {
      const speed = r(rng.int(3, 24) * 5);
      const hours = level === 1 ? r(rng.int(1, 6)) : r(rng.int(2, 12), 2);
      return { question: `${name} drives at a steady ${formatRational(speed)} km/h for ${withUnit(hours, "hours")}. How many kilometers does ${name} travel?`, answer: formatRational(speed.mul(hours)) };
    }
    case "speed": {
      const speed = r(rng.int(6, 90));
      const hours = r(rng.int(2, 10), rng.pick([1, 2, 4]));
      return { question: `A cyclist covers ${formatRational(speed.mul(hours))} km in ${withUnit(hours, "hours")} at constant speed. What is the speed in km/h?`, answer: formatRational(speed) };
    }
    case "unit_price": {
      const each = level === 1 ? r(rng.int(1, 20)) : randomDecimal(rng, 1, 15, 2);
      const n = rng.int(2, 9);
      const m = rng.int(2, 15);
      return {
        question: `${n} notebooks cost ${formatNumber(each.mul(r(n)), { money: true })} in total. At the same price each, how many dollars do ${m} notebooks cost?`,
        answer: formatRational(each.mul(r(m))),
      };
    }
    case "fill_time": {
      const rate = r(rng.int(2, 30));
      const minutes = r(rng.int(3, 40));
      if (level === 3) {
        const drain = r(rng.int(1, Number(rate.num) - 1));
        const net = rate.sub(drain);
        return {
          question: `A tank fills at ${formatRational(rate)} liters per minute while a leak drains ${formatRational(drain)} liters per minute. How many minutes does it take to collect ${formatRational(net.mul(minutes))} liters?`,
          answer: formatRational(minutes),
        };
      }
      return { question: `A pump moves ${formatRational(rate)} liters of water per minute. How many minutes does it need for ${formatRational(rate.mul(minutes))} liters?`, answer: formatRational(minutes) };
    }
    case "ratio": {
      const a = rng.int(1, 7);
      let b = rng.int(1, 7);
      if (b === a) b += 1;
      const unit = rng.int(2, 25);
      const total = (a + b) * unit;
      const other = rng.pick(NAMES.filter((n) => n !== name));
      return {
        question: `${name} and ${other} share ${total} stickers in the ratio ${a}:${b}. How many stickers does ${other} get?`,
        answer: String(b * unit),
      };
    }
    case "two_legs": {
      const s1 = r(rng.int(4, 20) * 5);
      const h1 = r(rng.int(1, 4));
      const s2 = r(rng.int(4, 20) * 5);
      const h2 = r(rng.int(1, 4));
      const avg = s1.mul(h1).add(s2.mul(h2)).div(h1.add(h2));
      return {
        question: `${name} drives ${withUnit(h1, "hours")} at ${formatRational(s1)} km/h and then ${withUnit(h2, "hours")} at ${formatRational(s2)} km/h. What is the average speed for the whole trip, in km/h?`,
        answer: formatRational(avg),
      };
    }
    default: {
      const v1 = r(rng.int(3, 15) * 4);
      const v2 = r(rng.int(3, 15) * 4);
      const t = r(rng.int(1, 8), 2);
      const d = v1.add(v2).mul(t);
      return {
        question: `Two trains start ${formatRational(d)} km apart and travel toward each other at ${formatRational(v1)} km/h and ${formatRational(v2)} km/h. After how many hours do they meet?`,
        answer: formatRational(t),
      };
    }
  }
};
