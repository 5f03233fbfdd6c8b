using System;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

// Peer app for the load harness: plaintext and JSON endpoints on the framework's server, configured the
// way a tuned TechEmpower "platform"-style entry would be (no logging, no routing middleware).
int port = 8081;
int? httpsPort = null;
string? httpsCertificate = null;
string? httpsKey = null;
bool http2 = false;
for (int i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case "--http2":
            // HTTP/2 on both endpoints: h2c by prior knowledge on the plain one (Kestrel serves h2c only on an HTTP/2-only
            // endpoint), h2 by ALPN on the HTTPS one, as the Falconet sample serves them.
            http2 = true;
            break;
        case "--port" when i + 1 < args.Length:
            port = int.Parse(args[i + 1], System.Globalization.CultureInfo.InvariantCulture);
            break;
        case "--https-port" when i + 1 < args.Length:
            httpsPort = int.Parse(args[i + 1], System.Globalization.CultureInfo.InvariantCulture);
            break;
        case "--https-cert" when i + 1 < args.Length:
            httpsCertificate = args[i + 1];
            break;
        case "--https-key" when i + 1 < args.Length:
            httpsKey = args[i + 1];
            break;
    }
}

// The same PEM certificate and key as the Falconet sample's --https-cert and --https-key, for TLS comparisons.
X509Certificate2? certificate = httpsPort is null ? null
    : X509Certificate2.CreateFromPemFile(
        httpsCertificate ?? throw new ArgumentException("--https-port needs --https-cert"),
        httpsKey ?? throw new ArgumentException("--https-port needs --https-key"));

var builder = WebApplication.CreateSlimBuilder();
builder.Logging.ClearProviders();

// The tuned mode of the harness runs the process with inline socket completions; Kestrel then also skips its own
// hand-off to the thread pool, as TechEmpower's tuned Kestrel entries do.
bool inlineCompletions = Environment.GetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS") == "1";
builder.WebHost.UseSockets(o => o.UnsafePreferInlineScheduling = inlineCompletions);
builder.WebHost.ConfigureKestrel(o =>
{
    o.ListenLocalhost(port, listen => listen.Protocols = http2 ? HttpProtocols.Http2 : HttpProtocols.Http1);
    if (httpsPort is int tlsPort)
    {
        // HTTP/1.1 only unless --http2 (then h2 and http/1.1 by ALPN, as the Falconet endpoint offers).
        o.ListenLocalhost(tlsPort, listen =>
        {
            listen.Protocols = http2 ? HttpProtocols.Http1AndHttp2 : HttpProtocols.Http1;
            listen.UseHttps(certificate!);
        });
    }

    o.AddServerHeader = true;
});
var app = builder.Build();
byte[] hello = "Hello, World!"u8.ToArray();

// The message is the same for every request, so its length is known up front: the JSON response carries a
// Content-Length, as the sample's does and TechEmpower's Kestrel entries send, instead of chunked framing.
int jsonLength = JsonSerializer.SerializeToUtf8Bytes(new JsonMessage("Hello, World!"), PeerJsonContext.Default.JsonMessage).Length;

app.Run(context =>
{
    var path = context.Request.Path;
    if (path == "/plaintext")
    {
        context.Response.StatusCode = 200;
        context.Response.ContentType = "text/plain";
        context.Response.ContentLength = hello.Length;
        return context.Response.Body.WriteAsync(hello).AsTask();
    }

    if (path == "/json")
    {
        context.Response.StatusCode = 200;
        context.Response.ContentType = "application/json";
        context.Response.ContentLength = jsonLength;
        // One writer per thread, reset for each response, as the Falconet sample does: no writer per request.
        Utf8JsonWriter writer = JsonWriters.For(context.Response.BodyWriter);
        JsonSerializer.Serialize(writer, new JsonMessage("Hello, World!"), PeerJsonContext.Default.JsonMessage);
        writer.Flush();
        writer.Reset(System.IO.Stream.Null);
        return System.Threading.Tasks.Task.CompletedTask;
    }

    context.Response.StatusCode = 404;
    return System.Threading.Tasks.Task.CompletedTask;
});

Console.WriteLine($"Kestrel peer listening on http://127.0.0.1:{port}" + (httpsPort is null ? "" : $" and https://127.0.0.1:{httpsPort}"));
app.Run();

internal static class JsonWriters
{
    [ThreadStatic]
    private static Utf8JsonWriter? t_writer;

    public static Utf8JsonWriter For(System.Buffers.IBufferWriter<byte> output)
    {
        Utf8JsonWriter? writer = t_writer;
        if (writer is null)
        {
            return t_writer = new Utf8JsonWriter(output);
        }

        writer.Reset(output);
        return writer;
    }
}

// A new message per request, as TechEmpower's rules ask; a struct, as in the Falconet sample, so it costs no allocation.
internal readonly record struct JsonMessage([property: JsonPropertyName("message")] string Message);

[JsonSerializable(typeof(JsonMessage))]
internal sealed partial class PeerJsonContext : JsonSerializerContext;
