// Counts, with Llama 3's own BPE tokenizer (llama3-tokenizer-js 1.2.0 from the npm registry,
// which carries Meta's 128,256-token vocabulary and merges), the tokens of:
//   - every task_input and task_plan of the TimelyLLM drone trace set;
//   - TypeFly's system prompt as ../shared/data/typefly ships it (its four asset files,
//     concatenated with a newline between them, in the order below).
// Kairos reads the result (resources/timelyllm/llama3_token_counts.json, compiled into the
// core) instead of guessing 3-4 characters per token. Run once, from the project root:
//   (cd tools/llama3_tokens && npm install --no-save && node count.mjs ../../../shared/data) \
//       > resources/timelyllm/llama3_token_counts.json
// Counts exclude BOS and EOS; a generated plan is its count plus the EOS that ends it.
import llama3Tokenizer from 'llama3-tokenizer-js';
import fs from 'fs';
import path from 'path';

const data = process.argv[2] ?? '../../../shared/data';
const count = (s) => llama3Tokenizer.encode(s, { bos: false, eos: false }).length;
const texts = {};
const traces = JSON.parse(
  fs.readFileSync(path.join(data, 'timelyllm/timelyllm_drone_trace_set_extracted.json'), 'utf8'));
for (const t of traces) {
  for (const s of [t.task_input, t.task_plan]) if (typeof s === 'string') texts[s] = count(s);
}
const parts = ['minispec_syntax.txt', 'high_level_skills.json', 'guides.txt', 'plan_examples.txt'];
const prompt = parts.map((f) => fs.readFileSync(path.join(data, 'typefly', f), 'utf8')).join('\n');
const out = {
  tokenizer: 'llama3-tokenizer-js 1.2.0 (Meta Llama 3 BPE, 128,256 tokens), no BOS or EOS',
  made_by: 'tools/llama3_tokens/count.mjs',
  typefly_system_prompt: { files: parts, characters: prompt.length, tokens: count(prompt) },
  texts,
};
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
