using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.Loader;
using Falconet.Generator.Emitting;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;

namespace Falconet.Generator.Tests;

/// <summary>Compiles emitted sources (plus optional test code) in memory and loads the assembly.</summary>
internal static class CompiledOutput
{
    public static CSharpCompilation Compile(IEnumerable<string> sources) =>
        GeneratorHarness.CreateCompilation(sources.ToArray());

    public static IEnumerable<Diagnostic> Problems(CSharpCompilation compilation) =>
        compilation.GetDiagnostics().Where(d => d.Severity >= DiagnosticSeverity.Warning);

    /// <summary>Compiles and loads the sources, then calls the static method <paramref name="type"/>.Run().</summary>
    public static string Run(IEnumerable<string> sources, string type)
    {
        CSharpCompilation compilation = Compile(sources);
        using var stream = new MemoryStream();
        var result = compilation.Emit(stream);
        if (!result.Success)
        {
            throw new InvalidOperationException(string.Join(Environment.NewLine, result.Diagnostics.Where(d => d.Severity == DiagnosticSeverity.Error)));
        }

        stream.Position = 0;
        var context = new AssemblyLoadContext("falconet-generated", isCollectible: true);
        try
        {
            Assembly assembly = context.LoadFromStream(stream);
            return (string)assembly.GetType(type, throwOnError: true)!.GetMethod("Run")!.Invoke(null, null)!;
        }
        finally
        {
            context.Unload();
        }
    }

    public static IEnumerable<string> DefaultSources() => GeneratorHarness.Sources(GeneratorHarness.Run()).Values;

    public static IEnumerable<string> CustomSources() => Emitter.Emit(CustomSchema.Plan()).Select(f => f.Text);
}
