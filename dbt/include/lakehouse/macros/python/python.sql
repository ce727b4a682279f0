{#- Python models (models/python_models.py): run in the adapter's SparkSession, written as SQL. -#}

{% macro lakehouse_python_model_view() %}
  {#- Run this Python model's code now; the name of the temporary view holding its DataFrame,
      which the materialization writes like a SQL model's `select * from <view>`. -#}
  {{ return(adapter.python_model_view(compiled_code, model.name, model.original_file_path)) }}
{% endmacro %}
