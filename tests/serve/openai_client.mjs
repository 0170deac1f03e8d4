// The official `openai` client for Node against a running `dragoman-cli serve`: the wire format is checked by
// a client nobody here wrote. Usage: node openai_client.mjs BASE_URL   (exits non-zero on the first mismatch)
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const base = process.argv[2];
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'none-needed', maxRetries: 0 });

const models = await client.models.list();
const ids = models.data.map((m) => m.id);
assert.ok(ids.length >= 1, 'models.list() names the base');
const model = ids[0];

const request = {
  model,
  messages: [{ role: 'user', content: 'The man sees a small house today.\nMy brother lives in Berlin.' }],
  source_lang: 'en',
  target_lang: 'de',
};
const whole = await client.chat.completions.create(request);
assert.equal(whole.object, 'chat.completion');
assert.equal(whole.choices[0].message.role, 'assistant');
assert.equal(whole.choices[0].finish_reason, 'stop');
const text = whole.choices[0].message.content;
assert.ok(text.length > 0, 'a whole answer has text');
assert.equal(whole.usage.total_tokens, whole.usage.prompt_tokens + whole.usage.completion_tokens);

const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
let streamed = '';
let usage = null;
let finish = null;
for await (const chunk of stream) {
  assert.equal(chunk.object, 'chat.completion.chunk');
  if (chunk.usage) usage = chunk.usage;
  for (const choice of chunk.choices) {
    streamed += choice.delta?.content ?? '';
    if (choice.finish_reason) finish = choice.finish_reason;
  }
}
assert.equal(streamed, text, 'the streamed deltas add up to the whole answer');
assert.equal(finish, 'stop');
assert.equal(usage?.completion_tokens, whole.usage.completion_tokens);

await assert.rejects(client.chat.completions.create({ ...request, model: 'no-such-model' }), (error) => {
  assert.equal(error.status, 404);
  assert.equal(error.code, 'model_not_found');
  return true;
});
await assert.rejects(client.chat.completions.create({ ...request, temperature: 9 }), (error) => error.status === 400);
console.log(`openai client: models, whole and streamed answers, errors: ok (${model})`);
