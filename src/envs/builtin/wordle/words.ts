import allowedList from "./allowed.json" with { type: "json" };
import solutionList from "./solutions.json" with { type: "json" };

/**
 * Word lists written for edgegym (checked against the Debian `wamerican` dictionary
 * while writing, not downloaded): common five-letter words as secrets, and a larger
 * list of accepted guesses that includes every secret.
 */
export const SOLUTIONS: readonly string[] = solutionList as string[];
export const ALLOWED: ReadonlySet<string> = new Set(allowedList as string[]);
