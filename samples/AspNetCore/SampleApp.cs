using System;
using System.Diagnostics;
using System.Net.WebSockets;
using System.Text.Json.Serialization;
using System.Threading;
using System.Threading.Tasks;
using Falconet.AspNetCore;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Falconet.Samples.AspNetCore;

/// <summary>
/// The sample's application: the same minimal APIs on either server. Only <see cref="UseServer"/> looks at which one;
/// the endpoints, the middleware and the JSON set-up are the same code.
/// </summary>
public static class SampleApp
{
    private static long s_requests;

    /// <summary>Builds the application for <paramref name="args"/> (--server falconet|kestrel, plus the usual host arguments such as --urls).</summary>
    public static WebApplication Build(string[] args, Action<WebApplicationBuilder>? configure = null)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(args);
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        builder.Services.ConfigureHttpJsonOptions(options => options.SerializerOptions.TypeInfoResolverChain.Insert(0, SampleJsonContext.Default));
        builder.Services.AddGrpc();
        UseServer(builder, builder.Configuration["server"] ?? "falconet");
        configure?.Invoke(builder);

        WebApplication app = builder.Build();

        // A middleware: counts and times every request (the timing goes out as a header, set when the response starts).
        app.Use(async (context, next) =>
        {
            Interlocked.Increment(ref s_requests);
            long started = Stopwatch.GetTimestamp();
            context.Response.OnStarting(static state =>
            {
                var (response, started) = ((HttpResponse, long))state;
                response.Headers["X-Elapsed-Microseconds"] = ((long)Stopwatch.GetElapsedTime(started).TotalMicroseconds).ToString(System.Globalization.CultureInfo.InvariantCulture);
                return Task.CompletedTask;
            }, (context.Response, started));
            await next(context);
        });

        // WebSockets on /ws, which echoes every message (IHttpUpgradeFeature on Falconet). The middleware is on that branch
        // only: it makes a handshake object for every request it sees, and the load harness measures the other endpoints.
        app.Map("/ws", branch =>
        {
            branch.UseWebSockets();
            branch.Run(EchoWebSocketAsync);
        });

        // A page for a browser: it fetches /json and echoes a message through /ws, then writes what came back into the page.
        app.MapGet("/", () => Results.Content(Page, "text/html; charset=utf-8"));

        app.MapGet("/plaintext", () => "Hello, World!");
        app.MapGet("/json", () => new Message("Hello, World!"));
        app.MapGet("/hello/{name}", (string name) => Results.Text($"Hello, {name}!"));
        app.MapPost("/echo", (Message message) => Results.Json(message with { Text = message.Text.ToUpperInvariant() }, SampleJsonContext.Default.Message));
        app.MapGet("/status/{code:int}", (int code) => Results.StatusCode(code));
        app.MapGet("/stream", StreamAsync);

        // gRPC (HTTP/2 only: h2c on a plain endpoint, ALPN h2 over TLS): the greeter of Protos/greet.proto.
        app.MapGrpcService<GreeterService>();

        // For the load harness: requests counted and bytes allocated by the process so far.
        app.MapGet("/stats", () => Results.Text(string.Create(System.Globalization.CultureInfo.InvariantCulture,
            $"requests={Interlocked.Read(ref s_requests)} allocated_bytes={GC.GetTotalAllocatedBytes(precise: true)}")));
        return app;
    }

    /// <summary>
    /// Accepts a WebSocket and echoes each message back in the same frames, until the client closes (the close is echoed
    /// too, completing the handshake) or goes away. A plain request gets 400.
    /// </summary>
    public static async Task EchoWebSocketAsync(HttpContext context)
    {
        if (!context.WebSockets.IsWebSocketRequest)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }

        using WebSocket socket = await context.WebSockets.AcceptWebSocketAsync();
        byte[] buffer = new byte[16 * 1024];
        try
        {
            while (true)
            {
                ValueWebSocketReceiveResult received = await socket.ReceiveAsync(buffer.AsMemory(), context.RequestAborted);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    await socket.CloseAsync(socket.CloseStatus ?? WebSocketCloseStatus.NormalClosure, socket.CloseStatusDescription, CancellationToken.None);
                    return;
                }

                await socket.SendAsync(buffer.AsMemory(0, received.Count), received.MessageType, received.EndOfMessage, context.RequestAborted);
            }
        }
        catch (WebSocketException) when (context.RequestAborted.IsCancellationRequested)
        {
            // The client went away without the close handshake: nothing more to say to it.
        }
    }

    /// <summary>The page a browser loads: its script writes "json=...;echo=..." (or "error=...") into #result, then sets data-done.</summary>
    internal const string Page = """
        <!doctype html>
        <html>
        <head><meta charset="utf-8"><title>Falconet sample</title></head>
        <body>
        <p id="result">running</p>
        <script>
        (async () => {
          const result = document.getElementById('result');
          try {
            const json = await (await fetch('/json')).json();
            const echo = await new Promise((resolve, reject) => {
              const socket = new WebSocket(location.origin.replace(/^http/, 'ws') + '/ws');
              socket.onopen = () => socket.send('hello over ' + location.protocol);
              socket.onmessage = message => { resolve(message.data); socket.close(1000, 'done'); };
              socket.onerror = () => reject(new Error('the WebSocket failed'));
            });
            result.textContent = 'json=' + json.message + ';echo=' + echo;
          } catch (error) {
            result.textContent = 'error=' + error.message;
          }
          result.dataset.done = 'true';
        })();
        </script>
        </body>
        </html>
        """;

    /// <summary>Picks the server: Falconet unless "kestrel" is asked for.</summary>
    private static void UseServer(WebApplicationBuilder builder, string server)
    {
        switch (server.ToUpperInvariant())
        {
            case "FALCONET":
                builder.WebHost.UseFalconet();
                break;
            case "KESTREL":
                builder.WebHost.UseKestrel();
                break;
            default:
                throw new ArgumentException($"Unknown server '{server}': use falconet or kestrel.");
        }
    }

    /// <summary>Streams ten numbered lines, one every 50 ms, flushing each, until done or the client goes away.</summary>
    private static async Task StreamAsync(HttpContext context, CancellationToken aborted)
    {
        context.Response.ContentType = "text/plain";
        for (int i = 1; i <= 10 && !aborted.IsCancellationRequested; i++)
        {
            await context.Response.WriteAsync($"line {i}\n", aborted);
            await context.Response.Body.FlushAsync(aborted);
            await Task.Delay(50, aborted);
        }
    }
}

/// <summary>The JSON message of the sample, in and out.</summary>
public sealed record Message([property: JsonPropertyName("message")] string Text);

[JsonSerializable(typeof(Message))]
internal sealed partial class SampleJsonContext : JsonSerializerContext;
