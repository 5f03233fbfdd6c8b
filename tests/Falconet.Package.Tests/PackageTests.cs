using System;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Shouldly;

namespace Falconet.Package.Tests;

/// <summary>
/// What a team does, from packages only: the CustomHeaders sample (its own app.headers.json) builds from a local feed, runs,
/// and its server treats the team's headers as known headers over a real socket; a fresh consumer with mistakes in its
/// schema fails to build with the documented IDs at the JSON lines. One pack for the class, two builds.
/// </summary>
public sealed class PackageTests : IAsyncLifetime
{
    private readonly string _work = Path.Combine(Path.GetTempPath(), "falconet-package-" + Guid.NewGuid().ToString("N"));
    private string _feed = "";
    private string _version = "";

    public async Task InitializeAsync()
    {
        _feed = Path.Combine(_work, "feed");
        Directory.CreateDirectory(_feed);
        _version = await ConsumerBuild.PackAsync(_feed);
    }

    public Task DisposeAsync()
    {
        ConsumerBuild.ForgetCachedPackages(_version);
        Directory.Delete(_work, recursive: true);
        return Task.CompletedTask;
    }

    [Fact(Timeout = 600_000)]
    public async Task The_CustomHeaders_sample_builds_from_the_packages_and_its_server_knows_the_teams_headers()
    {
        string sample = Path.Combine(ConsumerBuild.RepositoryRoot, "samples", "CustomHeaders");
        string config = ConsumerBuild.WriteNuGetConfig(Path.Combine(_work, "sample"), _feed);

        // Version: the central PackageVersion of Falconet and Falconet.Generator is the repository's, here the test one.
        CommandResult build = await ConsumerBuild.RunAsync(sample, "build", "-c", ConsumerBuild.Configuration, "-nologo",
            "-p:Version=" + _version, "-p:RestoreConfigFile=" + config);
        build.ShouldSucceed();

        // With EmitCompilerGeneratedFiles, the header set lands where docs/custom-headers.md says.
        string generated = Path.Combine(sample, "obj", ConsumerBuild.Configuration, "net10.0", "generated",
            "Falconet.Generator", "Falconet.Generator.FalconetGenerator", "HeaderSet.g.cs");
        File.Exists(generated).ShouldBeTrue("no generated header set at " + generated);
        File.ReadAllText(generated).ShouldContain("public readonly struct HeaderSet : global::Falconet.Http.IHeaderSet", Case.Sensitive);
        File.ReadAllText(Path.Combine(sample, "obj", "falconet", "known-headers.schema.json"))
            .ShouldBe(File.ReadAllText(Path.Combine(ConsumerBuild.RepositoryRoot, "schema", "known-headers.schema.json")));

        string dll = Path.Combine(sample, "bin", ConsumerBuild.Configuration, "net10.0", "CustomHeaders.dll");
        using Process server = Process.Start(ConsumerBuild.DotnetStartInfo(sample, dll, "--port", "0"))!;
        try
        {
            string banner = (await server.StandardOutput.ReadLineAsync().WaitAsync(TimeSpan.FromSeconds(60))) ?? "";
            Match listening = Regex.Match(banner, @"http://127\.0\.0\.1:(\d+)/");
            listening.Success.ShouldBeTrue("the sample did not say where it listens: " + banner);

            string response = await ExchangeAsync(int.Parse(listening.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture),
                "GET /orders HTTP/1.1\r\nHost: localhost\r\nx-TENANT-id: blue\r\nX-REQUEST-ID: r-42\r\nx-api-version: 2025-01-15\r\n" +
                "x-other: o\r\nConnection: close\r\n\r\n");

            response.ShouldStartWith("HTTP/1.1 200 OK\r\n");
            response.ShouldContain("\r\nX-Served-By: custom-headers-sample\r\n", Case.Sensitive);
            response.ShouldContain("\r\nX-Request-Id: r-42\r\n", Case.Sensitive);

            // The typed properties of the team's headers return what was sent in any letter case.
            response.ShouldContain("\r\n\r\ntenant=blue\nrequest-id=r-42\napi-version=2025-01-15\n", Case.Sensitive);

            // Known headers are held under the schema's spelling; only the unknown one keeps the spelling it was sent with.
            response.ShouldContain("\nX-Tenant-Id: blue\nX-Request-Id: r-42\nX-Api-Version: 2025-01-15\nx-other: o\n", Case.Sensitive);
            response.ShouldNotContain("x-TENANT-id", Case.Sensitive);
        }
        finally
        {
            await StopAsync(server);
        }

        server.ExitCode.ShouldBe(0);
    }

    [Fact(Timeout = 600_000)]
    public async Task Mistakes_in_a_consumers_schema_fail_the_build_with_their_ids_at_the_json_lines()
    {
        string app = Path.Combine(_work, "bad");
        ConsumerBuild.WriteConsumer(app, _feed, _version,
            ("team.headers.json", """
                {
                  "methods": ["PURGE"],
                  "requestHeaders": [
                    { "name": "X Team Trace" }
                  ]
                }
                """),
            ("team-headers.json", """{ "responseHeaders": [{ "name": "X-Served-By" }] }"""),
            ("Program.cs", "System.Console.WriteLine();"));

        CommandResult build = await ConsumerBuild.RunAsync(app, "build", "-c", "Release", "-nologo");

        build.ExitCode.ShouldNotBe(0);
        build.Output.ShouldMatch(@"team\.headers\.json\(2,15\): error FALC016");
        build.Output.ShouldMatch(@"team\.headers\.json\(4,\d+\): error FALC004");

        // A schema under a name the generator does not read is a warning, not silence.
        build.Output.ShouldMatch(@"team-headers\.json\(1,1\): warning FALC017");
    }

    [Fact(Timeout = 600_000)]
    public async Task Deleting_a_schema_file_rebuilds_the_app_without_its_headers_on_an_incremental_build()
    {
        string app = Path.Combine(_work, "incremental");
        ConsumerBuild.WriteConsumer(app, _feed, _version,
            ("alpha.headers.json", """{ "requestHeaders": [{ "name": "X-Alpha" }] }"""),
            ("beta.headers.json", """{ "requestHeaders": [{ "name": "X-Beta" }] }"""),
            ("Program.cs", "System.Console.WriteLine();"));
        string dll = Path.Combine(app, "bin", "Release", "net10.0", "Consumer.dll");

        (await ConsumerBuild.RunAsync(app, "build", "-c", "Release", "-nologo")).ShouldSucceed();
        TypedProperties(dll).ShouldBe(["get_XAlpha", "get_XBeta"]);

        File.Delete(Path.Combine(app, "beta.headers.json"));
        (await ConsumerBuild.RunAsync(app, "build", "-c", "Release", "-nologo", "--no-restore")).ShouldSucceed();

        TypedProperties(dll).ShouldBe(["get_XAlpha"]);
    }

    // The getters of the typed properties an app's header set has, read from the assembly's metadata.
    private static string[] TypedProperties(string assemblyPath)
    {
        using var stream = File.OpenRead(assemblyPath);
        using var pe = new System.Reflection.PortableExecutable.PEReader(stream);
        System.Reflection.Metadata.MetadataReader metadata = System.Reflection.Metadata.PEReaderExtensions.GetMetadataReader(pe);
        return metadata.MethodDefinitions
            .Select(handle => metadata.GetString(metadata.GetMethodDefinition(handle).Name))
            .Where(name => name.StartsWith("get_X", StringComparison.Ordinal))
            .Distinct()
            .Order(StringComparer.Ordinal)
            .ToArray();
    }

    private static async Task<string> ExchangeAsync(int port, string request)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
        await socket.SendAsync(Encoding.ASCII.GetBytes(request), SocketFlags.None, timeout.Token);

        // Connection: close: the server closes once the response is out.
        var received = new MemoryStream();
        byte[] buffer = new byte[4096];
        int count;
        while ((count = await socket.ReceiveAsync(buffer, SocketFlags.None, timeout.Token)) > 0)
        {
            received.Write(buffer, 0, count);
        }

        return Encoding.UTF8.GetString(received.ToArray());
    }

    // SIGTERM, as a service manager stops it: the sample stops its server gracefully and exits 0.
    private static async Task StopAsync(Process server)
    {
        if (server.HasExited)
        {
            return;
        }

        using (Process kill = Process.Start("kill", "-TERM " + server.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)))
        {
            await kill.WaitForExitAsync();
        }

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        try
        {
            await server.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            server.Kill(entireProcessTree: true);
            throw new TimeoutException("the sample did not stop within 20 s of SIGTERM");
        }
    }
}
