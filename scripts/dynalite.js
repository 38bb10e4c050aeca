// Runs dynalite's command line, surviving a request that its client aborts
// before the body is complete: dynalite 4.0.0 throws from the request's
// error handler (index.js, httpHandler) and the whole emulator exits, which
// a fault-injection test that cuts connections mid-request can cause at any
// time. The abort is logged and the emulator keeps serving; any other
// uncaught error still ends it.
'use strict'
process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.message === 'aborted')) {
    console.error(`dynalite: a client aborted a request mid-body (${err.message}); still serving`)
    return
  }
  console.error(err)
  process.exit(1)
})
// argv: node dynalite.js REPO_DIR [dynalite's own options]
const repo = process.argv.splice(2, 1)[0]
require(require.resolve('dynalite/cli.js', { paths: [repo] }))
