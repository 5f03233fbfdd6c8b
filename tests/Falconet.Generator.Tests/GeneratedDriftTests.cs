using System.IO;

namespace Falconet.Generator.Tests;

public sealed class GeneratedDriftTests
{
    private const string RefreshCommand = "dotnet build runtime -p:FalconetRefreshGenerated=true";

    [Fact]
    public void Committed_generated_files_match_what_the_generator_emits_now()
    {
        string folder = Path.Combine(GeneratorHarness.RepoRoot(), "generated");
        var emitted = GeneratorHarness.Sources(GeneratorHarness.Run());
        foreach ((string hintName, string text) in emitted)
        {
            string path = Path.Combine(folder, hintName);
            if (!File.Exists(path))
            {
                Assert.Fail($"generated/{hintName} is missing. Refresh generated/ with: {RefreshCommand}");
            }

            if (File.ReadAllText(path) != text)
            {
                Assert.Fail($"generated/{hintName} differs from what the generator emits now. Refresh generated/ with: {RefreshCommand}");
            }
        }

        foreach (string path in Directory.GetFiles(folder, "*.g.cs"))
        {
            if (!emitted.ContainsKey(Path.GetFileName(path)))
            {
                Assert.Fail($"generated/{Path.GetFileName(path)} is no longer emitted. Refresh generated/ with: {RefreshCommand}");
            }
        }
    }
}
