/** The framework floor: a bare Koa route answering a constant envelope, nothing else. */
import Koa from 'koa';

const app = new Koa();
const body = JSON.stringify({
  error: false,
  message: 'OK',
  data: { constant: true },
  status: 200,
  errorDetails: {},
});
app.use((ctx) => {
  ctx.type = 'application/json';
  ctx.body = body;
});
app.listen(Number(process.env.PORT), '127.0.0.1');
