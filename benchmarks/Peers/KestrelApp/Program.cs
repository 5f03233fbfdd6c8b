using System;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;

// "Kestrel, app-level" for the load harness: the plaintext and JSON endpoints as an ASP.NET Core application writes
// them (one terminal HttpContext handler, no logging, no routing middleware) on Kestrel. It is not TechEmpower's Kestrel
// entry (PlatformBenchmarks, a raw connection handler with Kestrel's HttpParser<T>), which the harness runs too; this
// peer is for what the entry cannot do: HTTPS and HTTP/2. Its sockets are tuned as the entry's are.
int port = 8081;
int? httpsPort = null;
int? h2cPort = null;
string? httpsCertificate = null;
string? httpsKey = null;
for (int i = 0; i < args.Length - 1; i++)
{
    switch (args[i])
    {
        case "--port":
            port = int.Parse(args[i + 1], System.Globalization.CultureInfo.InvariantCulture);
            break;
        case "--https-port":
            httpsPort = int.Parse(args[i + 1], System.Globalization.CultureInfo.InvariantCulture);
            break;
        case "--h2c-port":
            h2cPort = int.Parse(args[i + 1], System.Globalization.CultureInfo.InvariantCulture);
            break;
        case "--https-cert":
            httpsCertificate = args[i + 1];
            break;
        case "--https-key":
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

// As TechEmpower's Kestrel entry: no wait for data before a receive buffer is taken, and with inline socket completions
// (DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1, the harness's inline mode) Kestrel skips its own hand-off to the
// thread pool too.
bool inlineCompletions = Environment.GetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS") == "1";
builder.WebHost.UseSockets(o =>
{
    o.WaitForDataBeforeAllocatingBuffer = false;
    o.UnsafePreferInlineScheduling = inlineCompletions;
});
builder.WebHost.ConfigureKestrel(o =>
{
    o.ListenLocalhost(port);
    if (httpsPort is int tlsPort)
    {
        // HTTP/1.1 only, as the Falconet endpoint offers by ALPN.
        o.ListenLocalhost(tlsPort, listen =>
        {
            listen.Protocols = HttpProtocols.Http1;
            listen.UseHttps(certificate!);
        });
    }

    if (h2cPort is int cleartextHttp2Port)
    {
        // HTTP/2 without TLS needs prior knowledge (h2load's default for http:// addresses): HTTP/2 only on this port.
        o.ListenLocalhost(cleartextHttp2Port, listen => listen.Protocols = HttpProtocols.Http2);
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

Console.WriteLine($"Kestrel app-level peer listening on http://127.0.0.1:{port}" + (httpsPort is null ? "" : $", https://127.0.0.1:{httpsPort}")
    + (h2cPort is null ? "" : $", h2c://127.0.0.1:{h2cPort}"));
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
