// Writes docs/configuration.md from the settings table (src/server/settings.ts).
import { writeFileSync } from "node:fs";
import { configurationDoc } from "../src/server/settings-doc.js";

writeFileSync(new URL("../docs/configuration.md", import.meta.url), configurationDoc());
console.log("wrote docs/configuration.md");
