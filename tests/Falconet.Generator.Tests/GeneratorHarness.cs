using System;
using System.Collections.Generic;
using System.Collections.Immutable;
using System.IO;
using System.Linq;
using System.Threading;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Text;

namespace Falconet.Generator.Tests;

/// <summary>Runs <see cref="FalconetGenerator"/> in-process on an in-memory compilation.</summary>
internal static class GeneratorHarness
{
    /// <summary>The namespace the runtime gives its generated code (see runtime/Falconet.csproj).</summary>
    public const string RuntimeNamespace = "Falconet.Http";

    /// <summary>The namespace of the app in the app-mode tests.</summary>
    public const string AppNamespace = "Team.Api";

    /// <summary>FalconetGenerate of the runtime's own build.</summary>
    public const string Runtime = "Runtime";

    private static readonly Lazy<ImmutableArray<MetadataReference>> s_references = new(LoadReferences);

    /// <summary>Every assembly of the test host: the .NET shared framework, Microsoft.Extensions.Primitives and the Falconet runtime.</summary>
    public static ImmutableArray<MetadataReference> References => s_references.Value;

    /// <summary>The test host's assemblies without the Falconet runtime: a project that references only the generator.</summary>
    public static ImmutableArray<MetadataReference> ReferencesWithoutRuntime =>
        References.Where(static r => !string.Equals(System.IO.Path.GetFileName(r.Display), "Falconet.dll", StringComparison.OrdinalIgnoreCase)).ToImmutableArray();

    public static CSharpCompilation CreateCompilation(params string[] sources) => CreateCompilation(References, sources);

    public static CSharpCompilation CreateCompilation(ImmutableArray<MetadataReference> references, params string[] sources) =>
        CSharpCompilation.Create(
            "Falconet.Generated.Tests",
            sources.Select(static (source, i) => CSharpSyntaxTree.ParseText(source, new CSharpParseOptions(LanguageVersion.Latest), "Source" + i + ".cs")),
            references,
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, nullableContextOptions: NullableContextOptions.Enable, allowUnsafe: true));

    public static GeneratorDriver CreateDriver(IEnumerable<AdditionalText>? schemas = null, string? ns = RuntimeNamespace, string? visibility = null, string? rootNamespace = null, string? generate = Runtime)
    {
        var options = new Dictionary<string, string>();
        if (generate is not null)
        {
            options["build_property.FalconetGenerate"] = generate;
        }

        if (ns is not null)
        {
            options["build_property.FalconetNamespace"] = ns;
        }

        if (visibility is not null)
        {
            options["build_property.FalconetVisibility"] = visibility;
        }

        if (rootNamespace is not null)
        {
            options["build_property.RootNamespace"] = rootNamespace;
        }

        return CSharpGeneratorDriver.Create(
            new[] { new FalconetGenerator().AsSourceGenerator() },
            schemas ?? Array.Empty<AdditionalText>(),
            new CSharpParseOptions(LanguageVersion.Latest),
            new TestOptionsProvider(options),
            new GeneratorDriverOptions(IncrementalGeneratorOutputKind.None, trackIncrementalGeneratorSteps: true));
    }

    /// <summary>Runs the generator as the runtime's build does (FalconetGenerate=Runtime, namespace Falconet.Http).</summary>
    public static GeneratorDriverRunResult Run(params AdditionalText[] schemas) => Run(schemas, RuntimeNamespace);

    public static GeneratorDriverRunResult Run(IEnumerable<AdditionalText> schemas, string? ns, string? visibility = null, string? generate = Runtime)
    {
        GeneratorDriver driver = CreateDriver(schemas, ns, visibility, generate: generate);
        return driver.RunGenerators(CreateCompilation("namespace App { internal static class Program { } }")).GetRunResult();
    }

    /// <summary>Runs the generator as an app's build does: the default FalconetGenerate, a reference to the runtime.</summary>
    public static GeneratorDriverRunResult RunApp(params AdditionalText[] schemas) => Run(schemas, AppNamespace, generate: null);

    /// <summary>The emitted files of a run, by hint name.</summary>
    public static IReadOnlyDictionary<string, string> Sources(GeneratorDriverRunResult result) =>
        result.Results.Single().GeneratedSources.ToDictionary(static s => s.HintName, static s => s.SourceText.ToString(), StringComparer.Ordinal);

    public static AdditionalText Schema(string path, string json) => new InMemoryText(path, json);

    private static ImmutableArray<MetadataReference> LoadReferences()
    {
        string assemblies = (string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!;
        return assemblies.Split(Path.PathSeparator)
            .Where(static path => path.Length > 0)
            .Select(static path => (MetadataReference)MetadataReference.CreateFromFile(path))
            .ToImmutableArray();
    }

    private sealed class InMemoryText : AdditionalText
    {
        private readonly SourceText _text;

        public InMemoryText(string path, string text)
        {
            Path = path;
            _text = SourceText.From(text);
        }

        public override string Path { get; }

        public override SourceText GetText(CancellationToken cancellationToken = default) => _text;
    }

    private sealed class TestOptionsProvider : AnalyzerConfigOptionsProvider
    {
        private readonly TestOptions _global;

        public TestOptionsProvider(Dictionary<string, string> values) => _global = new TestOptions(values);

        public override AnalyzerConfigOptions GlobalOptions => _global;

        public override AnalyzerConfigOptions GetOptions(SyntaxTree tree) => TestOptions.Empty;

        public override AnalyzerConfigOptions GetOptions(AdditionalText textFile) => TestOptions.Empty;
    }

    private sealed class TestOptions : AnalyzerConfigOptions
    {
        public static readonly TestOptions Empty = new(new Dictionary<string, string>());

        private readonly Dictionary<string, string> _values;

        public TestOptions(Dictionary<string, string> values) => _values = values;

        public override bool TryGetValue(string key, out string value) => _values.TryGetValue(key, out value!);
    }
}
