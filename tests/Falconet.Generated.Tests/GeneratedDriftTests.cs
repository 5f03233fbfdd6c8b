using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using Shouldly;

namespace Falconet.Generated.Tests;

/// <summary>
/// The committed copy in generated/ is exactly what the runtime build compiled, so reviewers diff the real code: the one
/// drift test of the generated code (docs/generator.md), with the one command that refreshes the copy.
/// </summary>
public sealed class GeneratedDriftTests
{
    /// <summary>The refresh command, as docs/generator.md gives it.</summary>
    private const string RefreshCommand = "dotnet build runtime -c Release -p:FalconetRefreshGenerated=true";

    [Fact]
    public void Committed_generated_files_are_what_the_runtime_build_emits_now()
    {
        string emittedFolder = Folder("RuntimeGeneratedFolder");
        string committedFolder = Folder("CommittedGeneratedFolder");
        string[] emitted = Directory.Exists(emittedFolder) ? Directory.GetFiles(emittedFolder, "*.g.cs") : [];
        emitted.Length.ShouldBeGreaterThan(0, $"The runtime build wrote no generated files to {emittedFolder}; build the runtime project first.");

        var drift = new List<string>();
        foreach (string path in emitted)
        {
            string name = Path.GetFileName(path);
            string committed = Path.Combine(committedFolder, name);
            if (!File.Exists(committed))
            {
                drift.Add($"generated/{name} is missing");
            }
            else if (File.ReadAllText(committed) != File.ReadAllText(path))
            {
                drift.Add($"generated/{name} differs from what the generator emits now");
            }
        }

        foreach (string path in Directory.GetFiles(committedFolder, "*.g.cs"))
        {
            string name = Path.GetFileName(path);
            if (!emitted.Any(e => Path.GetFileName(e) == name))
            {
                drift.Add($"generated/{name} is no longer emitted");
            }
        }

        drift.ShouldBeEmpty($"Refresh generated/ from the repository root with: {RefreshCommand}");
    }

    private static string Folder(string key) => Path.GetFullPath(typeof(GeneratedDriftTests).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>()
        .Single(a => a.Key == key).Value!);
}
