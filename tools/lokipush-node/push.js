// push.js URL N JOB: logs N lines through winston-loki (protobuf + snappy,
// its default) to URL's /loki/api/v1/push with stream labels
// {job=JOB, handler="winston", level=...} plus a per-line label parity,
// waits until every batch is answered, and prints the content type it
// pushed with and "pushed N". It exits 1 on a push error.
const winston = require('winston')
const LokiTransport = require('winston-loki')

const [url, n, job] = process.argv.slice(2)
let failed = null
const transport = new LokiTransport({
  host: url,
  labels: { job, handler: 'winston' },
  interval: 0.2,
  format: winston.format.printf((info) => info.message),
  onConnectionError: (err) => { failed = err }
})
const logger = winston.createLogger({ level: 'debug', transports: [transport] })

async function main () {
  for (let i = 0; i < Number(n); i++) {
    logger.info({ message: `winston line ${i}`, labels: { parity: i % 2 === 0 ? 'even' : 'odd' } })
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
  await transport.flush()
  const ct = transport.batcher.contentType
  await transport.close()
  if (failed) {
    console.error('push failed:', failed.message || failed)
    process.exit(1)
  }
  console.log(`content-type ${ct}`)
  console.log(`pushed ${n}`)
  process.exit(0)
}
main()
