using System;
using System.Linq;
using Falconet.Samples.AspNetCore;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

// dotnet run --project samples/AspNetCore -c Release -- --server falconet|kestrel --urls http://127.0.0.1:5000
WebApplication app = SampleApp.Build(args);
app.Lifetime.ApplicationStarted.Register(() =>
{
    // One line a script or a test can read the bound address from (port 0 resolved).
    var addresses = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses;
    Console.WriteLine($"{app.Services.GetRequiredService<IServer>().GetType().Name} listening on {addresses.First()}");
});
app.Run();
