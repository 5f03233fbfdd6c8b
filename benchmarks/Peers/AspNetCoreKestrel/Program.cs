using System;
using Falconet.Samples.AspNetCore;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;

// The ASP.NET Core sample's application (samples/AspNetCore, the same code the harness runs on Falconet) on Kestrel,
// with Kestrel's sockets set as TechEmpower's Kestrel entry sets them: no wait for data before a receive buffer is
// taken, and, when the process runs with DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 (the harness's inline mode),
// continuations inline on the socket's completion instead of a hand-off to the thread pool.
//
//   dotnet AspNetCoreKestrel.dll --urls http://127.0.0.1:5000 [any host argument of the sample]
bool inlineCompletions = Environment.GetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS") == "1";
string[] arguments = [.. args, "--server", "kestrel"];
WebApplication app = SampleApp.Build(arguments, builder => builder.WebHost.UseSockets(sockets =>
{
    sockets.WaitForDataBeforeAllocatingBuffer = false;
    sockets.UnsafePreferInlineScheduling = inlineCompletions;
}));
app.Run();
