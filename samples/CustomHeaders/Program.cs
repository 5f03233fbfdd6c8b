using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading.Tasks;
using CustomHeaders;
using Falconet.Http;
using Falconet.Server;
using Microsoft.Extensions.Primitives;

// The headers of app.headers.json are well-known to this server: its parser matches them with generated masked compares,
// and the handler reads and writes them as typed properties of HttpContext<HeaderSet>.
int port = args is ["--port", string value] ? int.Parse(value, CultureInfo.InvariantCulture) : 8081;
var options = new FalconetServerOptions();
options.Endpoints.Add(new IPEndPoint(IPAddress.Loopback, port));

var stop = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
using PosixSignalRegistration sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, Stop);
using PosixSignalRegistration sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Stop);

await using var server = new FalconetServer<HeaderSet>(options, Handle);
await server.StartAsync();
Console.WriteLine($"Listening on http://{server.BoundEndpoints[0]}/ ; press Ctrl+C to stop");
await stop.Task;
await server.StopAsync();

void Stop(PosixSignalContext context)
{
    context.Cancel = true;
    stop.TrySetResult();
}

// Answers with what the server made of the request's headers: the app's typed properties, then every header as the
// collection holds it. A known header is listed under the name its schema spells; an unknown one as it was sent.
static ValueTask Handle(HttpContext<HeaderSet> context)
{
    RequestHeaders<HeaderSet> request = context.Request.Headers;
    ResponseHeaders<HeaderSet> response = context.Response.Headers;
    response.XServedBy = "custom-headers-sample";
    response.XRequestId = request.XRequestId;
    response.ContentType = "text/plain";

    var body = new StringBuilder()
        .Append("tenant=").Append(request.XTenantId).Append('\n')
        .Append("request-id=").Append(request.XRequestId).Append('\n')
        .Append("api-version=").Append(request.XApiVersion).Append('\n');
    foreach (KeyValuePair<string, StringValues> header in request)
    {
        body.Append(header.Key).Append(": ").Append(header.Value).Append('\n');
    }

    context.Response.Write(Encoding.UTF8.GetBytes(body.ToString()));
    return default;
}
