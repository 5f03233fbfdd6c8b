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
    /// <summary>The smoke tests compile the runtime's output under this namespace: under Falconet.Http it would clash with the referenced runtime.</summary>
    public const string SmokeNamespace = "Smoke.Http";

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

    /// <summary>What the runtime's build emits (under <see cref="SmokeNamespace"/>), with the constructors the runtime writes by hand.</summary>
    public static IEnumerable<string> DefaultSources() =>
        GeneratorHarness.Sources(GeneratorHarness.Run(Array.Empty<AdditionalText>(), SmokeNamespace)).Values.Append(RuntimeConstructors(SmokeNamespace));

    public static IEnumerable<string> CustomSources() =>
        Emitter.Emit(CustomSchema.Plan()).Select(f => f.Text).Append(RuntimeConstructors(CustomSchema.Namespace));

    /// <summary>
    /// The hand-written half of the runtime's collections (runtime/Http/Headers/RequestHeaders.cs and ResponseHeaders.cs):
    /// the constructors, which do not vary with the schema and so are not generated.
    /// </summary>
    public static string RuntimeConstructors(string ns) => $$"""
        namespace {{ns}}
        {
            public partial class RequestHeaders
            {
                public RequestHeaders() : base(Table) { }
            }

            public partial class ResponseHeaders
            {
                public ResponseHeaders() : base(Table) { }
            }
        }
        """;
}
