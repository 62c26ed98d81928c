import { formatNumber, formatRational, r, NAMES, type FamilyGenerator } from "./types.js";

/** Percent of, percent change, reverse percent and "what percent" questions with exact answers. */
export const percentages: FamilyGenerator = (rng, level) => {
  const kinds = level === 1 ? ["of", "what_percent"] : level === 2 ? ["of", "what_percent", "increase", "decrease"] : ["increase", "decrease", "reverse", "successive"];
  const kind = rng.pick(kinds);
  const name = rng.pick(NAMES);
  switch (kind) {
    case "of": {
      const p = level === 1 ? rng.pick([10, 20, 25, 50, 75]) : rng.int(1, 19) * 5;
      const base = r(rng.int(2, 60) * 20);
      return { question: `What is ${p}% of ${formatRational(base)}?`, answer: formatRational(base.mul(r(p, 100))) };
    }
    case "what_percent": {
      const whole = r(rng.pick([20, 40, 50, 80, 200, 400, 500]));
      const p = rng.int(1, 19) * 5;
      const part = whole.mul(r(p, 100));
      return { question: `${formatRational(part)} is what percent of ${formatRational(whole)}? Answer with the number of percent.`, answer: String(p) };
    }
    case "increase":
    case "decrease": {
      const price = r(rng.int(4, 80) * 5);
      const p = rng.int(1, 12) * 5;
      const factor = kind === "increase" ? r(100 + p, 100) : r(100 - p, 100);
      const verb = kind === "increase" ? "rises" : "falls";
      return {
        question: `The price of ${name}'s bicycle is ${formatNumber(price, { money: true })}. It ${verb} by ${p}%. What is the new price in dollars?`,
        answer: formatRational(price.mul(factor)),
      };
    }
    case "reverse": {
      const original = r(rng.int(4, 60) * 5);
      const p = rng.pick([10, 20, 25, 40, 50]);
      const sale = original.mul(r(100 - p, 100));
      return {
        question: `After a ${p}% discount, a coat costs ${formatNumber(sale, { money: true })}. What was the original price in dollars?`,
        answer: formatRational(original),
      };
    }
    default: {
      const start = r(rng.int(2, 40) * 100);
      const up = rng.int(1, 6) * 5;
      const down = rng.int(1, 6) * 5;
      const end = start.mul(r(100 + up, 100)).mul(r(100 - down, 100));
      return {
        question: `A town has ${formatRational(start)} residents. The population grows by ${up}% one year and then shrinks by ${down}% the next. How many residents are there after the two years?`,
        answer: formatRational(end),
      };
    }
  }
};
