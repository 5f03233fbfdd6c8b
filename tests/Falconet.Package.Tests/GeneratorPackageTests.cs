using System;
using System.IO;
using System.Threading.Tasks;

namespace Falconet.Package.Tests;

/// <summary>
/// A team references the Falconet.Generator package, adds team.headers.json, and gets the fast path for its own
/// headers and methods at build time; a mistake in that file fails the build with a located diagnostic.
/// </summary>
public sealed class GeneratorPackageTests : IAsyncLifetime
{
    private const string TeamSchema = """
        {
          "methods": ["PROPFIND"],
          "requestHeaders": [
            { "name": "X-Team-Trace", "values": ["on"] }
          ],
          "responseHeaders": [
            { "name": "X-Team-Build" }
          ]
        }
        """;

    private const string TeamProgram = """
        using System.Buffers;
        using Team.Api;

        var request = new RequestHeaders();
        request.TryAppend("x-TEAM-trace"u8, "on"u8);
        request.TryAppend("Host"u8, "example.test"u8);
        KnownMethod method = KnownMethods.Match("PROPFIND /files HTTP/1.1"u8, out int length);

        var response = new ResponseHeaders { XTeamBuild = "42" };
        var output = new ArrayBufferWriter<byte>();
        response.CopyTo(ref output);

        Console.WriteLine($"trace={request.XTeamTrace} host={request.Host} method={method}/{length} count={request.Count}");
        Console.WriteLine("response=" + System.Text.Encoding.ASCII.GetString(output.WrittenSpan).Replace("\r\n", "|"));
        """;

    private readonly string _work = Path.Combine(Path.GetTempPath(), "falconet-package-" + Guid.NewGuid().ToString("N"));
    private string _version = "";

    public async Task InitializeAsync()
    {
        Directory.CreateDirectory(_work);
        _version = await ConsumerBuild.PackGeneratorAsync(Path.Combine(_work, "feed"));
    }

    public Task DisposeAsync()
    {
        ConsumerBuild.ForgetCachedPackage(_version);
        Directory.Delete(_work, recursive: true);
        return Task.CompletedTask;
    }

    [Fact(Timeout = 600_000)]
    public async Task A_consumer_gets_matchers_for_its_own_headers_and_methods_from_the_package()
    {
        string app = Path.Combine(_work, "app");
        ConsumerBuild.WriteConsumer(app, Path.Combine(_work, "feed"), _version, TeamSchema, TeamProgram);

        CommandResult run = await ConsumerBuild.RunAsync(app, "run", "-c", "Release", "-nologo");

        run.ExitCode.ShouldSucceed(run.Output);
        Assert.Contains("trace=on host=example.test method=Propfind/8 count=2", run.Output, StringComparison.Ordinal);
        Assert.Contains("response=|X-Team-Build: 42", run.Output, StringComparison.Ordinal);

        // Editors validate team.headers.json against the schema the build put under obj/falconet/.
        string editorSchema = Path.Combine(app, "obj", "falconet", "known-headers.schema.json");
        Assert.True(File.Exists(editorSchema), "the build did not copy the editor schema to " + editorSchema);
        Assert.Equal(
            File.ReadAllText(Path.Combine(ConsumerBuild.RepositoryRoot, "schema", "known-headers.schema.json")),
            File.ReadAllText(editorSchema));
    }

    [Fact(Timeout = 600_000)]
    public async Task A_consumer_schema_error_fails_the_build_with_an_id_and_a_location_in_the_json()
    {
        string app = Path.Combine(_work, "bad");
        const string BadSchema = """
            {
              "requestHeaders": [
                { "name": "X Team Trace" }
              ]
            }
            """;
        ConsumerBuild.WriteConsumer(app, Path.Combine(_work, "feed"), _version, BadSchema, "System.Console.WriteLine();");

        CommandResult build = await ConsumerBuild.RunAsync(app, "build", "-c", "Release", "-nologo");

        Assert.NotEqual(0, build.ExitCode);
        Assert.Matches(@"team\.headers\.json\(3,\d+\): error FALC004", build.Output);
    }
}
