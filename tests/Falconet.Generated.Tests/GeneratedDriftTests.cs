using System;
using System.IO;
using System.Linq;
using System.Reflection;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>The committed copy in generated/ is exactly what the runtime build emits now, so reviewers diff the real code.</summary>
public sealed class GeneratedDriftTests
{
    private const string RefreshCommand = "dotnet build runtime -p:FalconetRefreshGenerated=true (from the repository root)";

    [Fact]
    public void Committed_generated_files_match_what_the_runtime_build_emits_now()
    {
        string emittedFolder = Folder("RuntimeGeneratedFolder");
        string committedFolder = Folder("CommittedGeneratedFolder");
        string[] emitted = Directory.Exists(emittedFolder) ? Directory.GetFiles(emittedFolder, "*.g.cs") : Array.Empty<string>();
        emitted.Length.ShouldBeGreaterThan(0, $"The runtime build wrote no generated files to {emittedFolder}; build the runtime project first.");

        foreach (string path in emitted)
        {
            string name = Path.GetFileName(path);
            string committed = Path.Combine(committedFolder, name);
            File.Exists(committed).ShouldBeTrue($"generated/{name} is missing. Refresh generated/ with: {RefreshCommand}");
            (File.ReadAllText(committed) == File.ReadAllText(path)).ShouldBeTrue(
                $"generated/{name} differs from what the generator emits now. Refresh generated/ with: {RefreshCommand}");
        }

        foreach (string path in Directory.GetFiles(committedFolder, "*.g.cs"))
        {
            string name = Path.GetFileName(path);
            emitted.ShouldContain(e => Path.GetFileName(e) == name, $"generated/{name} is no longer emitted. Refresh generated/ with: {RefreshCommand}");
        }
    }

    private static string Folder(string key) => Path.GetFullPath(typeof(GeneratedDriftTests).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == key).Value!);
}
